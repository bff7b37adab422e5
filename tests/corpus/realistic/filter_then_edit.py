# render candidates, keep the ones that pass review, edit them with a watermark note
# args: {"prompt": "a vintage camera on linen", "count": 4}
async def orchestrate(ctx, args):
    n = min(args.get("count", 3), 6)
    candidates = []
    for seed in range(n):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        candidates.append({"image": image["artifact"], "verdict": review["verdict"], "score": review["score"]})
    keep = [c for c in candidates if c["verdict"] == "pass"]
    edited = []
    for c in keep:
        out = await ctx.run("image.edit", {"image": c["image"], "prompt": "add a small corner watermark"})
        edited.append(out["artifact"])
    return {"kept": len(keep), "edited": edited}
