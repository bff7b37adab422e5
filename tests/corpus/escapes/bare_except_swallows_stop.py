# expect: R09
# technique: a bare except that would swallow the host's stop signal
async def orchestrate(ctx, args):
    try:
        image = await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})
    except:
        image = None
    return {"image": image}
