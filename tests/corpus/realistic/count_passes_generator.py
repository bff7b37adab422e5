# count passing reviews with sum over a generator expression
# args: {"prompt": "a ship in a bottle"}
async def orchestrate(ctx, args):
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": args["prompt"], "size": "512x512", "seed": s}) for s in range(5)
    ])
    reviews = await ctx.parallel([ctx.run("review.visual", {"image": i["artifact"]}) for i in images])
    passes = sum(1 for r in reviews if r["verdict"] == "pass")
    return {"passes": passes, "total": len(reviews)}
