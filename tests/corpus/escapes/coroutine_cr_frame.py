# expect: R07
# technique: cr_frame.f_globals of a helper coroutine
async def helper():
    return 1


async def orchestrate(ctx, args):
    coro = helper()
    globals_seen = coro.cr_frame.f_globals
    await coro
    return {"g": len(globals_seen)}
