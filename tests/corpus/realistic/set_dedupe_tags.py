# collect tags from several prompts, de-duplicate with a set, render one image per tag
# args: {"prompts": ["red barn, autumn", "autumn forest, fog", "red kite, fog"]}
async def orchestrate(ctx, args):
    tags = {t.strip() for p in args["prompts"][:5] for t in p.split(",")[:4]}
    unique = sorted(tags)[:6]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"minimal icon of {tag}", "size": "512x512"})
        for tag in unique
    ])
    return {"tags": unique, "icons": {tag: img["artifact"] for tag, img in zip(unique, images)}}
