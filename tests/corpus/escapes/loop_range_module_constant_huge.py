# expect: R03
# technique: range over a module-level literal constant far above the loop cap
STEPS = 1000000000


async def orchestrate(ctx, args):
    total = 0
    for i in range(STEPS):
        total = total + i
    return {"total": total}
