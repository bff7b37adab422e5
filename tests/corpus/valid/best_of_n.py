# render three candidates in parallel, review them in parallel, keep the best score
# args: {"prompt": "a hot air balloon over vineyards"}
async def orchestrate(ctx, args):
    async def candidate(seed):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        return image["artifact"]

    async def score(ref):
        review = await ctx.run("review.visual", {"image": ref})
        return {"image": ref, "score": review["score"]}

    refs = await ctx.parallel([candidate(seed) for seed in range(3)])
    scored = await ctx.parallel([score(ref) for ref in refs[:3]])
    best = scored[0]
    for item in scored[:3]:
        if item["score"] > best["score"]:
            best = item
    return {"best": best["image"], "score": best["score"]}
