# expect: R01
# technique: a top-level assignment that is not a literal constant
LIMIT = len("abcdef")


async def orchestrate(ctx, args):
    return {"limit": LIMIT}
