# render one image per seed given in args, at most five seeds
# args: {"prompt": "a tin robot", "seeds": [3, 5, 8]}
MAX_SEEDS = 5


async def orchestrate(ctx, args):
    seeds = [int(s) for s in args.get("seeds", [0])[:MAX_SEEDS]]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": args["prompt"], "size": "512x512", "seed": s}) for s in seeds
    ])
    by_seed = dict(zip(seeds, [i["artifact"] for i in images]))
    return {"by_seed": by_seed}
