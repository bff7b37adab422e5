# expect: R05
# technique: a literal dag task that depends on a task name that does not exist
async def orchestrate(ctx, args):
    async def hero(deps):
        return await ctx.run("image.generate", {"prompt": str(deps["brief"]), "size": "1024x1024"})

    return await ctx.dag({"hero": (hero, ["brief"])})
