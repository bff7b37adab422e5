# expect: R07
# technique: read the code object of a function (co_consts, co_names)
async def orchestrate(ctx, args):
    code = orchestrate.__code__
    return {"code": str(code)}
