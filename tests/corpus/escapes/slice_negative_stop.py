# expect: R03
# technique: xs[2:-1] has constant bounds but its length grows with the input
async def orchestrate(ctx, args):
    for item in args["items"][2:-1]:
        await ctx.run("text.generate", {"prompt": item})
    return {}
