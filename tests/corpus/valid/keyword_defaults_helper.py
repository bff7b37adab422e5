# a helper with keyword defaults called with and without overrides
# args: {"prompt": "a lighthouse in a gale"}
async def render(ctx, prompt, size="1024x1024", seed=7):
    image = await ctx.run("image.generate", {"prompt": prompt, "size": size, "seed": seed})
    return image["artifact"]


async def orchestrate(ctx, args):
    square = await render(ctx, args["prompt"])
    wide = await render(ctx, args["prompt"], size="1536x1024", seed=8)
    return {"square": square, "wide": wide}
