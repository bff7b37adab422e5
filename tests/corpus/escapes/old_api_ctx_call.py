# expect: R02
# technique: the retired ctx.call
async def orchestrate(ctx, args):
    image = await ctx.call("image.generate", {"prompt": "a lighthouse at dusk", "size": "1024x1024"})
    return {"image": image}
