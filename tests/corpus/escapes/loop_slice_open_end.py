# expect: R03
# technique: a slice with a start but no end: xs[2:]
async def orchestrate(ctx, args):
    out = []
    for item in args["items"][2:]:
        out.append(item)
    return {"out": out}
