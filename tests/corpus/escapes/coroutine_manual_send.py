# expect: R07
# technique: drive a capability coroutine by hand with send() instead of await
async def gen():
    return 1


async def orchestrate(ctx, args):
    coro = gen()
    try:
        coro.send(None)
    except Exception:
        pass
    return {}
