"""The README's tour: a brand video's storyboard, then four shots rendered in parallel.

The fourth size is one the image provider does not support, so the fourth shot is rejected
(HTTP 400) after the storyboard and the first three shots have been paid for.
"""

SIZES = ["1024x1024", "1536x1024", "1024x1536", "2048x2048"]


async def orchestrate(ctx, args):
    board = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})

    async def render(i, shot):
        return await ctx.run("image.generate", {"prompt": shot["prompt"], "size": SIZES[i], "seed": i})

    images = await ctx.parallel([render(i, s) for i, s in enumerate(board["shots"][:4])])
    return [img["artifact"] for img in images[:4]]
