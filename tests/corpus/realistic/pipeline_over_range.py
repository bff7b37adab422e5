# a pipeline over numbered variants: draw then review
# args: {"prompt": "a chess board mid-game"}
VARIANTS = 3


async def orchestrate(ctx, args):
    async def draw(i):
        image = await ctx.run("image.generate", {"prompt": f"{args['prompt']}, variant {i}", "size": "1024x1024", "seed": i})
        return image["artifact"]

    async def review(ref):
        verdict = await ctx.run("review.visual", {"image": ref})
        return {"image": ref, "verdict": verdict["verdict"]}

    results = await ctx.pipeline(list(range(VARIANTS)), draw, review)
    return {"results": results}
