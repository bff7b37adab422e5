# a two-stage pipeline per prompt, then rank the pipeline output
# args: {"prompts": ["a dune buggy", "a sand yacht", "a camel caravan"]}
async def orchestrate(ctx, args):
    async def draw(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
        return {"prompt": prompt, "image": image["artifact"]}

    async def score(item):
        review = await ctx.run("review.visual", {"image": item["image"]})
        return {**item, "score": review["score"]}

    scored = await ctx.pipeline(args["prompts"][:3], draw, score)
    ranked = sorted(scored, key=lambda s: s["score"], reverse=True)
    return {"ranked": [r["prompt"] for r in ranked], "top": ranked[0]}
