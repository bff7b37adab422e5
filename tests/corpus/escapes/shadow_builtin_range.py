# expect: R03
# technique: a top-level function named range shadows the builtin
def range(n):
    return ["x"] * n * 1000


async def orchestrate(ctx, args):
    out = []
    for i in range(3):
        out.append(await ctx.run("text.generate", {"prompt": f"line {i}"}))
    return {"out": out}
