# expect: R08
# technique: super() reaches the method resolution chain
async def orchestrate(ctx, args):
    return {"s": str(super())}
