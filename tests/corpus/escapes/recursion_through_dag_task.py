# expect: R09
# technique: a dag task that schedules itself in a new dag
async def orchestrate(ctx, args):
    async def task(deps):
        await ctx.run("video.generate", {"prompt": "again", "duration_s": 5})
        return await ctx.dag({"again": (task, [])})
    return await ctx.dag({"first": (task, [])})
