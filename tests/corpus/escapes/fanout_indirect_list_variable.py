# expect: R05
# technique: the unbounded list of coroutines is built first and handed to parallel through a name
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    jobs = [gen(p) for p in args["prompts"]]
    images = await ctx.parallel(jobs)
    return {"images": images}
