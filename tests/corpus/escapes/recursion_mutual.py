# expect: R09
# technique: two helpers that call each other
def ping(n):
    return pong(n - 1) if n > 0 else 0


def pong(n):
    return ping(n - 1) if n > 0 else 0


async def orchestrate(ctx, args):
    return {"v": ping(10)}
