# expect: R11
# technique: capability name and payload unpacked from a list
async def orchestrate(ctx, args):
    spec = ["image.generate", {"prompt": "a lighthouse", "size": "1024x1024"}]
    image = await ctx.run(*spec)
    return {"image": image}
