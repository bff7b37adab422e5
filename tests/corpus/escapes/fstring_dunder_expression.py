# expect: R07
# technique: a dunder attribute inside an f-string replacement field
async def orchestrate(ctx, args):
    return {"text": f"{args.__class__.__mro__}"}
