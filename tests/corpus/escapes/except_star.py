# expect: R09
# technique: try/except* splits exception groups (can swallow part of a cancellation)
async def orchestrate(ctx, args):
    try:
        image = await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})
    except* Exception:
        image = None
    return {"image": image}
