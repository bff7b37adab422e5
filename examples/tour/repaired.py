"""The README's tour: a brand video's storyboard, then four shots rendered in parallel.

The repair of brand.py: only the fourth size changes, to one the provider supports. The gate
accepts it (no committed call changes) and the run replays what it already paid for.
"""

SIZES = ["1024x1024", "1536x1024", "1024x1536", "1024x1024"]


async def orchestrate(ctx, args):
    board = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})

    async def render(i, shot):
        return await ctx.run("image.generate", {"prompt": shot["prompt"], "size": SIZES[i], "seed": i})

    images = await ctx.parallel([render(i, s) for i, s in enumerate(board["shots"][:4])])
    return [img["artifact"] for img in images[:4]]
