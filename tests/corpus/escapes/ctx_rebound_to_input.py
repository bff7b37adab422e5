# expect: R02
# technique: ctx rebound to a value from args before ctx.run
async def orchestrate(ctx, args):
    ctx = args["context"]
    return await ctx.run("text.generate", {"prompt": "x"})
