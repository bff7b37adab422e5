# rank reviewed images with sorted(key=lambda ...) (a lambda without capability calls)
# args: {"prompts": ["a wool sweater", "a leather bag", "a silk scarf"]}
async def orchestrate(ctx, args):
    async def make(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1536"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"prompt": prompt, "image": image["artifact"], "score": review["score"]}

    items = await ctx.parallel([make(p) for p in args["prompts"][:3]])
    ranked = sorted(items[:3], key=lambda item: item["score"], reverse=True)
    return {"ranking": [item["prompt"] for item in ranked[:3]]}
