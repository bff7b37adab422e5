# expect: R11
# technique: a race between two helpers that each loop over video calls; every branch is paid for
async def orchestrate(ctx, args):
    async def many():
        out = []
        for i in range(30):
            out.append(await ctx.run("video.generate", {"prompt": f"take {i}", "duration_s": 5}))
        return out
    return await ctx.race([many(), many()])
