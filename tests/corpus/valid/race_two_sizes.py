# race two renderings and keep whichever finishes first
# args: {"prompt": "a paper boat on a puddle"}
async def orchestrate(ctx, args):
    async def draw(size):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": size})
        return image["artifact"]

    winner = await ctx.race([draw("1024x1024"), draw("512x512")])
    return {"image": winner}
