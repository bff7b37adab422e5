# expect: R11
# technique: a capability that is not in the catalog
async def orchestrate(ctx, args):
    out = await ctx.run("shell.exec", {"cmd": "id"})
    return {"out": out}
