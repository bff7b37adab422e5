# expect: R11
# technique: capability name assembled with str.join
async def orchestrate(ctx, args):
    name = ".".join(["image", "generate"])
    image = await ctx.run(name, {"prompt": "a lighthouse", "size": "1024x1024"})
    return {"image": image}
