# shortlist candidates into a named variable and fan out edits over it
# args: {"prompt": "a bookshop cat asleep on the counter"}
async def orchestrate(ctx, args):
    candidates = await ctx.parallel([
        ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": s}) for s in range(4)
    ])
    reviews = await ctx.parallel([ctx.run("review.visual", {"image": c["artifact"]}) for c in candidates])
    paired = [{"image": c["artifact"], "score": r["score"]} for c, r in zip(candidates, reviews)]
    shortlist = sorted(paired, key=lambda p: p["score"], reverse=True)[:2]
    edits = await ctx.parallel([
        ctx.run("image.edit", {"image": p["image"], "prompt": "warmer tones"}) for p in shortlist
    ])
    return {"shortlist": shortlist, "edits": [e["artifact"] for e in edits]}
