# expect: R05
# technique: a literal dag whose tasks wait on each other (deadlock, or an unbounded retry at run time)
async def orchestrate(ctx, args):
    async def plan(deps):
        return await ctx.run("text.generate", {"prompt": "plan " + str(deps.get("review", ""))})

    async def review(deps):
        return await ctx.run("text.generate", {"prompt": "review " + str(deps["plan"])})

    return await ctx.dag({"plan": (plan, ["review"]), "review": (review, ["plan"])})
