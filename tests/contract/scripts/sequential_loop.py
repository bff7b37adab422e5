"""Text first, then one image per line in a bounded loop (the 5698 shape)."""


async def orchestrate(ctx, args):
    text = await ctx.run("text.generate", {"prompt": "Four shots for " + args["brief"]})
    lines = text["text"].splitlines()[:4]
    images = []
    for line in lines:
        image = await ctx.run("image.generate", {"prompt": line, "size": "1024x1024"})
        images.append(image)
    return images
