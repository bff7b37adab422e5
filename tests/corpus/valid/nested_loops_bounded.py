# two bounded nested loops: shots times variants
# args: {"shots": ["a harbour crane", "a container ship", "a tugboat"]}
VARIANTS = 2


async def orchestrate(ctx, args):
    grid = []
    for shot in args["shots"][:3]:
        row = []
        for variant in range(VARIANTS):
            image = await ctx.run("image.generate",
                                  {"prompt": f"{shot}, variant {variant}", "size": "512x512", "seed": variant})
            row.append(image["artifact"])
        grid.append(row)
    return {"grid": grid}
