# old-style % formatting for labels, a habit from older code
# args: {"items": ["scarf", "gloves", "hat"]}
async def orchestrate(ctx, args):
    labels = []
    for i, item in enumerate(args["items"][:5]):
        prompt = "product photo of a knitted %s, white background" % item
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
        labels.append("%02d-%s" % (i, item))
        labels.append(image["artifact"])
    return {"labels": labels}
