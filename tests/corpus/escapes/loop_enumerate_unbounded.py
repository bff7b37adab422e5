# expect: R03
# technique: enumerate of an unbounded iterable
async def orchestrate(ctx, args):
    out = []
    for i, item in enumerate(args["items"]):
        out.append(f"{i}:{item}")
    return {"out": out}
