# expect: R03
# technique: while True with a break that never happens
async def orchestrate(ctx, args):
    n = 0
    while True:
        n = n + 1
        if n < 0:
            break
    return {"n": n}
