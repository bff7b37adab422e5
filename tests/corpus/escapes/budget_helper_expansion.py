# expect: R11
# technique: a fanout of 60 branches, each running a helper with three video calls ($90), over the envelope's budget
async def clip(ctx, prompt):
    a = await ctx.run("video.generate", {"prompt": prompt + " wide", "duration_s": 10})
    b = await ctx.run("video.generate", {"prompt": prompt + " medium", "duration_s": 10})
    c = await ctx.run("video.generate", {"prompt": prompt + " close", "duration_s": 10})
    return [a, b, c]


async def orchestrate(ctx, args):
    return await ctx.parallel([clip(ctx, f"take {i}") for i in range(60)])
