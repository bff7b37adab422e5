# a slice bounded by a module constant, in a fanout
# args: {"shots": ["a tram at night", "a bakery at dawn", "a bridge in fog", "a park in snow", "a pier at noon"]}
MAX_SHOTS = 4


async def orchestrate(ctx, args):
    async def gen(shot):
        image = await ctx.run("image.generate", {"prompt": shot, "size": "1024x1024"})
        return image["artifact"]

    images = await ctx.parallel([gen(s) for s in args["shots"][:MAX_SHOTS]])
    return {"images": images}
