# module and function docstrings are allowed and ignored by callsites
# args: {"prompt": "a row of colourful beach huts"}
"""Render one hero image and a caption for it."""


async def caption(ctx, prompt):
    """Ask for a short caption."""
    text = await ctx.run("text.generate", {"prompt": f"Caption: {prompt}", "max_tokens": 24})
    return text["text"]


async def orchestrate(ctx, args):
    """Entry point: one image, one caption."""
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1536x1024"})
    return {"image": image["artifact"], "caption": await caption(ctx, args["prompt"])}
