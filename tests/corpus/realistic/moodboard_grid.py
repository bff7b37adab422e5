# a moodboard: a 2x3 grid of palette and texture combinations
# args: {"theme": "coastal cottage"}
PALETTES = ["sea glass", "driftwood"]
TEXTURES = ["linen", "weathered paint", "rope"]


async def orchestrate(ctx, args):
    combos = [(p, t) for p in PALETTES for t in TEXTURES]
    jobs = [
        ctx.run("image.generate", {"prompt": f"{args['theme']} detail, {p} palette, {t} texture", "size": "512x512"})
        for p, t in combos
    ]
    tiles = await ctx.parallel(jobs)
    grid = [{"palette": p, "texture": t, "image": tile["artifact"]} for (p, t), tile in zip(combos, tiles)]
    return {"grid": grid}
