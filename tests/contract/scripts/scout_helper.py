"""A plan then a four-way image fanout written inline (the a425 original)."""


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    return await ctx.parallel(
        [ctx.run("image.generate", {"prompt": s["prompt"]}) for s in plan["shots"][:4]])
