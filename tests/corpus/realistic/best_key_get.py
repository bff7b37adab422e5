# pick the best image with max(scores, key=scores.get)
# args: {"prompt": "a rainy cafe window", "seeds": [4, 8, 15]}
async def orchestrate(ctx, args):
    scores = {}
    for seed in args["seeds"][:4]:
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        scores[image["artifact"]] = review["score"]
    best = max(scores, key=scores.get)
    return {"best": best, "scores": scores}
