# expect: R03
# technique: a bounded name rebound to unbounded input by := inside a comprehension
async def orchestrate(ctx, args):
    items = args["items"][:2]
    _ = [(items := args["items"]) for k in range(1)]
    for item in items:
        await ctx.run("text.generate", {"prompt": item})
    return {}
