# expect: R03
# technique: range(args['n'])
async def orchestrate(ctx, args):
    out = []
    for i in range(args["n"]):
        out.append(await ctx.run("text.generate", {"prompt": f"line {i}"}))
    return {"out": out}
