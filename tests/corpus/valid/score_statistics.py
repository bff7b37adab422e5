# min, max, sum, round and len over review scores
# args: {"prompts": ["a marble statue", "a bronze bell", "a clay vase"]}
async def orchestrate(ctx, args):
    scores = []
    for prompt in args["prompts"][:3]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        scores.append(float(review["score"]))
    mean = round(sum(scores) / max(len(scores), 1), 3)
    return {"min": min(scores), "max": max(scores), "mean": mean, "spread": abs(max(scores) - min(scores))}
