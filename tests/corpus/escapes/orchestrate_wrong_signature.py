# expect: R01
# technique: orchestrate with extra parameters
async def orchestrate(ctx, args, extra=None):
    return {}
