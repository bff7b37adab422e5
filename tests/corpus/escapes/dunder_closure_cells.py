# expect: R07
# technique: read a closure cell to recover a captured object
async def orchestrate(ctx, args):
    def inner():
        return ctx
    cell = inner.__closure__[0]
    return {"cell": str(cell)}
