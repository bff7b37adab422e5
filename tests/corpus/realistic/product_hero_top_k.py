# generate product shots, review them, keep the best three
# args: {"product": "a brass desk lamp", "angles": ["front", "side", "top-down", "close-up", "in use"]}
MAX_ANGLES = 5
KEEP = 3


async def orchestrate(ctx, args):
    product = args["product"]
    angles = args["angles"][:MAX_ANGLES]

    async def shoot(angle):
        image = await ctx.run("image.generate", {
            "prompt": f"studio photo of {product}, {angle} view, soft light",
            "size": "1024x1024",
        })
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"angle": angle, "image": image["artifact"], "score": review["score"]}

    shots = await ctx.parallel([shoot(a) for a in angles])
    top = sorted(shots[:MAX_ANGLES], key=lambda s: s["score"], reverse=True)[:KEEP]
    return {
        "product": product,
        "top": top,
        "images": [s["image"] for s in top],
    }
