# a literal parallel of different helpers: copy text and a key visual
# args: {"product": "trail running shoes"}
async def orchestrate(ctx, args):
    product = args["product"]

    async def copy():
        text = await ctx.run("text.generate", {"prompt": f"Write two lines of ad copy for {product}."})
        return text["text"]

    async def visual():
        image = await ctx.run("image.generate", {"prompt": f"{product} on a forest trail", "size": "1536x1024"})
        return image["artifact"]

    text, image = await ctx.parallel([copy(), visual()])
    return {"copy": text, "image": image}
