# expect: R06
# technique: from-import with an alias inside a helper
def clock():
    from time import time as now
    return now()


async def orchestrate(ctx, args):
    return {"t": clock()}
