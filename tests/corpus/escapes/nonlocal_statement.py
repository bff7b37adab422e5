# expect: R09
# technique: a nonlocal statement mutates an enclosing scope
async def orchestrate(ctx, args):
    calls = 0

    def bump():
        nonlocal calls
        calls = calls + 1

    bump()
    return {"calls": calls}
