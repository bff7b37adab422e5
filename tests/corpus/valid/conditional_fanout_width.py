# choose between two literal-bounded fanouts
# args: {"premium": true, "prompt": "a glass perfume bottle"}
async def orchestrate(ctx, args):
    async def gen(seed):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        return image["artifact"]

    if args.get("premium"):
        images = await ctx.parallel([gen(seed) for seed in range(4)])
    else:
        images = await ctx.parallel([gen(seed) for seed in range(2)])
    return {"images": images}
