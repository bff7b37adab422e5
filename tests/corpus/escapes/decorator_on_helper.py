# expect: R09
# technique: a decorator runs code at definition time and can replace the helper
def wrap(fn):
    return fn


@wrap
async def gen(ctx, prompt):
    return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})


async def orchestrate(ctx, args):
    return {"image": await gen(ctx, "a lighthouse")}
