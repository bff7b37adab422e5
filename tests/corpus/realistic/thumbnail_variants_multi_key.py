# video thumbnails ranked by verdict first, then by score
# args: {"title": "I built a cabin in 30 days"}
async def orchestrate(ctx, args):
    async def thumb(seed):
        image = await ctx.run("image.generate", {"prompt": f"YouTube thumbnail, bold, {args['title']}", "size": "1536x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": "readable at small size"})
        return {"seed": seed, "image": image["artifact"], "verdict": review["verdict"], "score": review["score"]}

    thumbs = await ctx.parallel([thumb(s) for s in (10, 20, 30, 40)])
    ordered = sorted(thumbs, key=lambda t: (t["verdict"] != "pass", -t["score"]))
    return {"order": [t["seed"] for t in ordered], "pick": ordered[0]["image"]}
