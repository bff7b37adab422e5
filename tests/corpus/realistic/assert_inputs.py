# assert preconditions on inputs before spending anything
# args: {"prompt": "a tiny house on wheels", "variants": 2}
async def orchestrate(ctx, args):
    assert isinstance(args.get("prompt"), str), "prompt must be a string"
    variants = int(args.get("variants", 1))
    assert 1 <= variants <= 4, "variants must be between 1 and 4"
    images = []
    for seed in range(variants):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1536x1024", "seed": seed})
        images.append(image["artifact"])
    return {"images": images}
