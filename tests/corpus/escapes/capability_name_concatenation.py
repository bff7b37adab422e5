# expect: R11
# technique: capability name built by concatenation
async def orchestrate(ctx, args):
    kind = "generate"
    image = await ctx.run("image." + kind, {"prompt": "a lighthouse", "size": "1024x1024"})
    return {"image": image}
