# expect: R11
# technique: a pipeline over 60 items with a video stage ($30) on a $10 budget
async def orchestrate(ctx, args):
    async def clip(prompt):
        return await ctx.run("video.generate", {"prompt": prompt, "duration_s": 5})
    return await ctx.pipeline(args["items"][:60], clip)
