# expect: R09
# technique: a pipeline stage that hands itself to ctx.pipeline again (recursion without a call)
async def orchestrate(ctx, args):
    async def stage(item):
        await ctx.run("video.generate", {"prompt": item, "duration_s": 5})
        return await ctx.pipeline([item], stage)
    return await ctx.pipeline(args["items"][:2], stage)
