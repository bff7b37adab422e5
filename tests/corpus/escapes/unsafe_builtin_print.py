# expect: R08
# technique: print writes to the sandbox's stdout side channel
async def orchestrate(ctx, args):
    print(args)
    return {}
