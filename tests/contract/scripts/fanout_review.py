"""Four-shot scout: plan, generate in parallel, review the first image (the e388 shape)."""

SIZE = "1024x1024"


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    shots = plan["shots"][:4]
    images = await ctx.parallel(
        [ctx.run("image.generate", {"prompt": s["prompt"], "size": SIZE}) for s in shots])
    review = await ctx.run("review.visual", {"image": images[0]["ref"]})
    return {"images": images, "review": review}
