# two echo calls, the second using the first's result
# args: {"n": 1}
async def orchestrate(ctx, args):
    first = await ctx.run("echo", {"n": args["n"]})
    second = await ctx.run("echo", {"n": first["n"] + 1})
    return {"values": [first["n"], second["n"]]}
