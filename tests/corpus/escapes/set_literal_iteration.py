# expect: R04
# technique: iterate a set literal: order depends on hashing
async def orchestrate(ctx, args):
    images = []
    for style in {"noir", "pastel", "neon"}:
        images.append(await ctx.run("image.generate", {"prompt": style, "size": "1024x1024"}))
    return {"images": images}
