"""The a425 repair: the committed image call moved into a helper (the gate must stop it)."""


async def gen_one(ctx, s):
    return await ctx.run("image.generate", {"prompt": s["prompt"]})


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    return await ctx.parallel([gen_one(ctx, s) for s in plan["shots"][:4]])
