# expect: R09
# technique: yield from delegation in a helper
def inner():
    yield 1


def outer():
    yield from inner()


async def orchestrate(ctx, args):
    return {}
