# expect: R04
# technique: iterate set(...) of a bounded list
async def orchestrate(ctx, args):
    out = []
    for tag in set(args["tags"][:5]):
        out.append(tag)
    return {"out": out}
