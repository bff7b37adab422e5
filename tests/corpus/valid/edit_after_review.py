# generate, review, and edit the image when the review fails
# args: {"prompt": "a city skyline in heavy rain"}
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": "readable silhouette"})
    if review["verdict"] == "pass":
        return {"image": image["artifact"], "edited": False}
    reasons = "; ".join(review.get("reasons", []))
    edited = await ctx.run("image.edit",
                           {"image": image["artifact"], "prompt": f"brighten and sharpen ({reasons})"})
    return {"image": edited["artifact"], "edited": True}
