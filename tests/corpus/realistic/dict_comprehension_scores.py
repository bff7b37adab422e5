# score several variants and build a dict of scores keyed by seed
# args: {"prompt": "an origami crane on a desk"}
SEEDS = [11, 22, 33, 44]


async def orchestrate(ctx, args):
    async def variant(seed):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"seed": seed, "artifact": image["artifact"], "score": review["score"]}

    variants = await ctx.parallel([variant(s) for s in SEEDS])
    scores = {v["seed"]: v["score"] for v in variants}
    best_seed = max(scores, key=lambda s: scores[s])
    best = [v for v in variants if v["seed"] == best_seed][0]
    return {"scores": scores, "best": best}
