"""A repair of brand.py that the gate stops before anything runs: besides fixing the fourth
size, it moves the image call into a module-level helper, so the committed calls of the run
would be reached at another callsite (and paid for again).
"""

SIZES = ["1024x1024", "1536x1024", "1024x1536", "1024x1024"]


async def render_shot(ctx, prompt, size, seed):
    return await ctx.run("image.generate", {"prompt": prompt, "size": size, "seed": seed})


async def orchestrate(ctx, args):
    board = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    shots = board["shots"][:4]
    images = await ctx.parallel(
        [render_shot(ctx, s["prompt"], SIZES[i], i) for i, s in enumerate(shots)])
    return [img["artifact"] for img in images[:4]]
