# expect: R09
# technique: a helper that calls itself
async def expand(ctx, depth):
    if depth > 0:
        await expand(ctx, depth - 1)
    return await ctx.run("text.generate", {"prompt": "again"})


async def orchestrate(ctx, args):
    return {"r": await expand(ctx, 3)}
