# expect: R09|R08
# technique: except BaseException swallows the host's stop signal like a bare except
async def orchestrate(ctx, args):
    try:
        image = await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})
    except BaseException:
        image = None
    return {"image": image}
