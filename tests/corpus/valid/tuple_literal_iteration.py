# iterate a tuple literal of sizes
# args: {"prompt": "a desert highway"}
async def orchestrate(ctx, args):
    renders = {}
    for size in ("512x512", "1024x1024"):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": size})
        renders[size] = image["artifact"]
    return renders
