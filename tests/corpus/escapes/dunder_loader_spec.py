# expect: R07
# technique: read module metadata names __loader__ and __spec__
async def orchestrate(ctx, args):
    return {"loader": str(__loader__), "spec": str(__spec__)}
