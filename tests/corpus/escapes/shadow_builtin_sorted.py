# expect: R03
# technique: a nested helper named sorted shadows the builtin and returns unbounded input
async def orchestrate(ctx, args):
    def sorted(items):
        return args["items"]
    out = []
    for item in sorted(["a"]):
        out.append(await ctx.run("image.generate", {"prompt": item, "size": "1024x1024"}))
    return {"out": out}
