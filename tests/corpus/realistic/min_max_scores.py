# report the spread between the best and the worst review
# args: {"prompt": "a silver necklace on velvet"}
async def orchestrate(ctx, args):
    reviews = []
    for seed in range(3):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        reviews.append(await ctx.run("review.visual", {"image": image["artifact"]}))
    scores = [r["score"] for r in reviews]
    return {"best": max(scores), "worst": min(scores), "spread": round(max(scores) - min(scores), 4)}
