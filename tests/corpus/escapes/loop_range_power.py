# expect: R03
# technique: range(10**9): a constant expression far above the loop cap
async def orchestrate(ctx, args):
    total = 0
    for i in range(10**9):
        total = total + 1
    return {"total": total}
