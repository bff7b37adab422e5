# expect: R08
# technique: id() depends on memory layout, a hidden input
async def orchestrate(ctx, args):
    return {"seed": id(args) % 1000}
