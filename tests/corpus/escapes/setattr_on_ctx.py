# expect: R08
# technique: replace a ctx primitive with setattr
async def orchestrate(ctx, args):
    setattr(ctx, "run", None)
    return {}
