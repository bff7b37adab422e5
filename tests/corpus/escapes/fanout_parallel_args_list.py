# expect: R05
# technique: hand an input list straight to ctx.parallel
async def orchestrate(ctx, args):
    results = await ctx.parallel(args["jobs"])
    return {"results": results}
