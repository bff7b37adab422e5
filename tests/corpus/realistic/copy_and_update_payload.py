# a base payload copied and updated per variant
# args: {"prompt": "a vintage motorcycle"}
BASE = {"size": "1024x1024"}


async def orchestrate(ctx, args):
    variants = []
    for seed in (1, 2, 3):
        payload = dict(BASE)
        payload.update({"prompt": args["prompt"], "seed": seed})
        image = await ctx.run("image.generate", payload)
        variants.append(image["artifact"])
    return {"variants": variants}
