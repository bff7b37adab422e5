# expect: R02
# technique: the retired ctx.gather
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    images = await ctx.gather(gen("a"), gen("b"))
    return {"images": images}
