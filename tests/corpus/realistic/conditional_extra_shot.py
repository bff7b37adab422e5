# render a hero; only if it fails review, render an alternative with a different prompt
# args: {"prompt": "a mechanical watch movement", "allow_retry": true}
async def orchestrate(ctx, args):
    hero = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    review = await ctx.run("review.visual", {"image": hero["artifact"]})
    result = {"hero": hero["artifact"], "verdict": review["verdict"]}
    if review["verdict"] == "pass" or not args.get("allow_retry", False):
        return result
    alt = await ctx.run("image.generate", {"prompt": args["prompt"] + ", brightly lit, high contrast", "size": "1024x1024", "seed": 42})
    result["alternative"] = alt["artifact"]
    return result
