# expect: R03
# technique: four nested loops, each far below the per-loop cap, whose product is 10^8 iterations
async def orchestrate(ctx, args):
    total = 0
    for a in range(100):
        for b in range(100):
            for c in range(100):
                for d in range(100):
                    total = total + a + b + c + d
    return {"total": total}
