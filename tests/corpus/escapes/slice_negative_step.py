# expect: R03
# technique: xs[:6:-1] looks bounded by 6 but walks from the end down to index 7
async def orchestrate(ctx, args):
    for item in args["items"][:6:-1]:
        await ctx.run("text.generate", {"prompt": item})
    return {}
