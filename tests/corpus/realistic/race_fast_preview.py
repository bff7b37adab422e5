# race a small preview against a full render, keep whichever lands first
# args: {"prompt": "a hot air balloon over vineyards"}
async def orchestrate(ctx, args):
    async def render(size):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": size})
        return {"size": size, "image": image["artifact"]}

    first = await ctx.race([render("512x512"), render("1024x1024")])
    return {"first": first}
