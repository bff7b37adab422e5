# expect: R07
# technique: ctx.run.__self__ recovers the ctx object behind the bound method
async def orchestrate(ctx, args):
    owner = ctx.run.__self__
    return {"o": str(owner)}
