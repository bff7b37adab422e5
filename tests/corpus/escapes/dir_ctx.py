# expect: R08
# technique: dir(ctx) enumerates private attributes
async def orchestrate(ctx, args):
    return {"names": dir(ctx)[:5]}
