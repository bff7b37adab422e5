# expect: R11
# technique: capability name held in a variable
async def orchestrate(ctx, args):
    name = "image.generate"
    image = await ctx.run(name, {"prompt": "a lighthouse", "size": "1024x1024"})
    return {"image": image}
