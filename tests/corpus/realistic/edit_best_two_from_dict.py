# keep a dict of results, take the two best items and edit them
# args: {"prompt": "a cup of matcha, top view"}
async def orchestrate(ctx, args):
    results = {}
    for seed in range(4):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        results[image["artifact"]] = review["score"]
    best_two = sorted(results.items(), key=lambda kv: kv[1], reverse=True)[:2]
    edits = await ctx.parallel([
        ctx.run("image.edit", {"image": ref, "prompt": "add a soft shadow"}) for ref, _ in best_two
    ])
    return {"best": [ref for ref, _ in best_two], "edits": [e["artifact"] for e in edits]}
