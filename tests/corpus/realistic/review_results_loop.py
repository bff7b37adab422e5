# generate a batch, then review every result from the parallel call
# args: {"prompt": "a cosy reading nook", "variants": 4}
async def orchestrate(ctx, args):
    prompt = args["prompt"]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024", "seed": seed})
        for seed in range(4)
    ])
    reviews = []
    for image in images:
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        reviews.append({"image": image["artifact"], "verdict": review["verdict"]})
    passed = [r for r in reviews if r["verdict"] == "pass"]
    return {"reviews": reviews, "passed": len(passed)}
