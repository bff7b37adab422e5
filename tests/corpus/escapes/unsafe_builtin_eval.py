# expect: R08
# technique: eval of a string
async def orchestrate(ctx, args):
    return {"v": eval(args["expression"])}
