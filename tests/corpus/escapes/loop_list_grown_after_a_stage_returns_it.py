# expect: R03
# technique: a pipeline stage returns the outer list; the caller grows it through the result
async def orchestrate(ctx, args):
    queue = ["seed"]

    async def stage(x):
        return queue

    results = await ctx.pipeline([1], stage)
    results[0].extend(args["more"])
    for item in queue:
        await ctx.run("text.generate", {"prompt": item})
    return {}
