# expect: R12
# technique: a capability call as a bare expression statement (never awaited)
async def orchestrate(ctx, args):
    ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})
    return {}
