# expect: R03
# technique: a mutable default is one list shared by every call; the caller grows it in between
async def collect(ctx, seen=[]):
    for item in seen:
        await ctx.run("text.generate", {"prompt": item})
    return seen


async def orchestrate(ctx, args):
    for i in range(3):
        grown = await collect(ctx)
        grown.extend(args["more"])
    return {}
