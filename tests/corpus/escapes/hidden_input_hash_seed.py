# expect: R08
# technique: hash() depends on PYTHONHASHSEED, a hidden input
async def orchestrate(ctx, args):
    pick = hash(args["prompt"]) % 4
    return {"pick": pick}
