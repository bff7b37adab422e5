# one visual in every social format, sizes from a constant table
# args: {"prompt": "a surfboard leaning on a beach hut"}
FORMATS = {"square": "1024x1024", "portrait": "1024x1536", "landscape": "1536x1024"}


async def orchestrate(ctx, args):
    names = sorted(FORMATS)
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": args["prompt"], "size": FORMATS[name]}) for name in names
    ])
    return {name: image["artifact"] for name, image in zip(names, images)}
