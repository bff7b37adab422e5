# expect: R09
# technique: a global statement writes module state shared across calls
COUNT = 0


def bump():
    global COUNT
    COUNT = COUNT + 1
    return COUNT


async def orchestrate(ctx, args):
    return {"c": bump()}
