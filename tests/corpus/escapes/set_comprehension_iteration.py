# expect: R04
# technique: iterate a set comprehension
async def orchestrate(ctx, args):
    out = []
    for word in {w.lower() for w in ["A", "b", "C"]}:
        out.append(word)
    return {"out": out}
