# expect: R03
# technique: zip of two unbounded iterables
async def orchestrate(ctx, args):
    out = []
    for a, b in zip(args["left"], args["right"]):
        out.append(a + b)
    return {"out": out}
