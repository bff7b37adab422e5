# expect: R09
# technique: a parameter default is evaluated once at def time: a paid call outside the block structure
async def orchestrate(ctx, args):
    async def gen(image=await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})):
        return image
    return await gen()
