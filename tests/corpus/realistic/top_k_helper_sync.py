# a sync helper returns the top entries; the caller edits each of them
# args: {"prompt": "a potted fern by a window"}
def top_k(items, k=2):
    ranked = sorted(items, key=lambda it: it["score"], reverse=True)
    return ranked[:k]


async def orchestrate(ctx, args):
    scored = []
    for seed in range(4):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        scored.append({"image": image["artifact"], "score": review["score"]})
    best = top_k(scored)
    finals = []
    for item in best[:2]:
        edited = await ctx.run("image.edit", {"image": item["image"], "prompt": "crop to the plant"})
        finals.append(edited["artifact"])
    return {"finals": finals}
