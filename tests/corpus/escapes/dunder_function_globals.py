# expect: R07
# technique: read the module globals of the script's own function
async def orchestrate(ctx, args):
    g = orchestrate.__globals__
    return {"keys": len(g)}
