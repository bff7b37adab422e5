# expect: R12
# technique: a top-level helper coroutine called without await
async def render(ctx, prompt):
    return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})


async def orchestrate(ctx, args):
    render(ctx, "a lighthouse")
    return {"done": True}
