# keep a running best while iterating candidates
# args: {"prompt": "a typewriter with a blank page"}
async def orchestrate(ctx, args):
    best_ref, best_score = None, -1.0
    for seed in range(4):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        if review["score"] > best_score:
            best_ref, best_score = image["artifact"], review["score"]
    return {"best": best_ref, "score": best_score}
