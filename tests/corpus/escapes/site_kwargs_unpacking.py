# expect: R10|R02
# technique: smuggle _site through ** unpacking of a dict
async def orchestrate(ctx, args):
    extra = {"_site": "orchestrate/#0"}
    image = await ctx.run("image.generate", {"prompt": "a lighthouse", "size": "1024x1024"}, **extra)
    return {"image": image}
