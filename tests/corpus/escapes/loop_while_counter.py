# expect: R03
# technique: a while loop with a counter that looks bounded
async def orchestrate(ctx, args):
    i = 0
    out = []
    while i < 3:
        out.append(i)
        i = i + 1
    return {"out": out}
