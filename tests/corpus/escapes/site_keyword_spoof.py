# expect: R10
# technique: pass _site to claim another callsite's identity
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": "a lighthouse", "size": "1024x1024"},
                          _site="orchestrate/#0")
    return {"image": image}
