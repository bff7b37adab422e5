# expect: R09
# technique: return inside finally discards the in-flight exception, including the host's stop signal
async def orchestrate(ctx, args):
    try:
        image = await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})
    finally:
        return {"done": True}
