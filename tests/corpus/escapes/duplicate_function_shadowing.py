# expect: R01
# technique: a second definition shadows the checked orchestrate
async def orchestrate(ctx, args):
    return await ctx.run("text.generate", {"prompt": "harmless"})


async def orchestrate(ctx, args):
    return {}
