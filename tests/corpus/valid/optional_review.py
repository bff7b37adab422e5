# the review is optional: when it fails the image is still returned with an unknown verdict
# args: {"prompt": "a lighthouse keeper's kitchen, morning light"}
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    verdict = "unknown"
    try:
        review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": "warm, inviting"})
        verdict = review["verdict"]
    except Exception:
        verdict = "unknown"
    return {"image": image["artifact"], "verdict": verdict}
