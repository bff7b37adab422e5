# expect: R03
# technique: `xs[0:0] += ys` inserts ys into xs although it reads like an item update
async def orchestrate(ctx, args):
    queue = ["seed"]
    queue[0:0] += args["more"]
    for item in queue:
        await ctx.run("text.generate", {"prompt": item})
    return {}
