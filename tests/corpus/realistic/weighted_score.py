# combine review sub-scores into a weighted score and rank
# args: {"prompt": "a mountain cabin in snow"}
WEIGHTS = {"score": 0.7, "passed": 0.3}


async def orchestrate(ctx, args):
    async def candidate(seed):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1536x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        passed = 1.0 if review["verdict"] == "pass" else 0.0
        total = WEIGHTS["score"] * review["score"] + WEIGHTS["passed"] * passed
        return {"seed": seed, "image": image["artifact"], "total": round(total, 4)}

    ranked = sorted(await ctx.parallel([candidate(s) for s in range(3)]), key=lambda c: -c["total"])
    return {"ranking": ranked, "winner": ranked[0]["image"]}
