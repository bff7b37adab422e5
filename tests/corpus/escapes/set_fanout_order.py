# expect: R04
# technique: fan out over a set: branch indexes (the fanout path) depend on hashing
async def orchestrate(ctx, args):
    async def gen(style):
        return await ctx.run("image.generate", {"prompt": style, "size": "1024x1024"})
    images = await ctx.parallel([gen(s) for s in {"noir", "pastel"}])
    return {"images": images}
