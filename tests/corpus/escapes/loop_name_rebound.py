# expect: R03
# technique: a name first bound to a slice, then rebound to unbounded input
async def orchestrate(ctx, args):
    items = args["items"][:4]
    items = args["items"]
    out = []
    for item in items:
        out.append(item)
    return {"out": out}
