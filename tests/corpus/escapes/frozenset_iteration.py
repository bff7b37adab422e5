# expect: R04
# technique: iterate frozenset(...)
async def orchestrate(ctx, args):
    out = []
    for tag in frozenset(["a", "b"]):
        out.append(tag)
    return {"out": out}
