# edit one base image into several styles listed in a constant
# args: {"prompt": "a quiet harbour at dawn"}
STYLES = ("oil painting", "pencil sketch", "pixel art", "blueprint")


async def orchestrate(ctx, args):
    base = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    edits = await ctx.parallel([
        ctx.run("image.edit", {"image": base["artifact"], "prompt": f"restyle as {style}"}) for style in STYLES
    ])
    return {"base": base["artifact"], "styles": {s: e["artifact"] for s, e in zip(STYLES, edits)}}
