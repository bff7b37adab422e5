# expect: R12
# technique: four coroutines are built but only a slice of one is handed to the container
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    jobs = [gen(p) for p in args["prompts"][:4]]
    return await ctx.parallel(jobs[:1])
