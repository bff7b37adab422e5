# expect: R07
# technique: reach object through a string literal's __class__.__base__
async def orchestrate(ctx, args):
    root = "".__class__.__base__
    return {"n": len(root.__subclasses__())}
