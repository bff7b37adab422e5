# expect: R12
# technique: a helper coroutine created and dropped
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    gen("a lighthouse")
    return {}
