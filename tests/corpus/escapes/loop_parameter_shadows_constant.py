# expect: R03
# technique: a helper parameter with the module constant's name bounds range()
MAX = 6


async def many(ctx, MAX):
    for i in range(MAX):
        await ctx.run("text.generate", {"prompt": f"line {i}"})


async def orchestrate(ctx, args):
    await many(ctx, args["n"])
    return {}
