# expect: R12
# technique: coroutines kept as dict values and never awaited
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    pending = {"hero": gen("hero"), "cover": gen("cover")}
    return {"n": len(pending)}
