# keep images whose score is above a threshold constant
# args: {"prompt": "a bowl of lemons"}
THRESHOLD = 0.5
COUNT = 4


async def orchestrate(ctx, args):
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": args["prompt"], "size": "512x512", "seed": s}) for s in range(COUNT)
    ])
    reviews = await ctx.parallel([ctx.run("review.visual", {"image": i["artifact"]}) for i in images])
    kept = [i["artifact"] for i, r in zip(images, reviews) if r["score"] >= THRESHOLD]
    return {"kept": kept, "threshold": THRESHOLD}
