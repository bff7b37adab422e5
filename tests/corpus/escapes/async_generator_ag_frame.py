# expect: R07 R09
# technique: an async generator's ag_frame (async generators need yield)
async def ticks():
    yield 1


async def orchestrate(ctx, args):
    agen = ticks()
    return {"g": len(agen.ag_frame.f_globals)}
