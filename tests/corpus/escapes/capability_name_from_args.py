# expect: R11
# technique: capability name taken from the job's args
async def orchestrate(ctx, args):
    result = await ctx.run(args["capability"], {"prompt": "a lighthouse"})
    return {"result": result}
