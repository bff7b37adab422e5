"""Brand video: a storyboard, then four shots rendered in parallel.

The formats list is data the script computes its payloads from; the fourth entry is a size
the image provider does not support, so the fourth shot is rejected with a 400.
"""

FORMATS = ["1024x1024", "1536x1024", "1024x1536", "2048x2048"]


async def orchestrate(ctx, args):
    board = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    shots = board["shots"][:4]

    async def render(i, shot):
        size = FORMATS[i]
        return await ctx.run("image.generate", {"prompt": shot["prompt"], "size": size, "seed": i})

    images = await ctx.parallel([render(i, shot) for i, shot in enumerate(shots)])
    return {"title": args["brief"], "shots": [img["artifact"] for img in images[:4]]}
