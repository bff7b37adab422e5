# expect: R01
# technique: a top-level expression statement runs at import time
len("warm up")


async def orchestrate(ctx, args):
    return {}
