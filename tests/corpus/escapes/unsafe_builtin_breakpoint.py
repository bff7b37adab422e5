# expect: R08
# technique: breakpoint() hands control to a debugger hook
async def orchestrate(ctx, args):
    breakpoint()
    return {}
