# the mode in args selects a cheap or a careful branch
# args: {"mode": "careful", "prompt": "a porcelain teapot"}
async def orchestrate(ctx, args):
    prompt = args["prompt"]
    if args.get("mode") == "fast":
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
        return {"image": image["artifact"], "reviewed": False}
    else:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"image": image["artifact"], "reviewed": True, "verdict": review["verdict"]}
