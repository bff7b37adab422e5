# expect: R03
# technique: a local assignment shadows the module constant that bounds the slice
MAX_SHOTS = 6


async def orchestrate(ctx, args):
    MAX_SHOTS = args["n"]
    for shot in args["shots"][:MAX_SHOTS]:
        await ctx.run("image.generate", {"prompt": shot, "size": "1024x1024"})
    return {}
