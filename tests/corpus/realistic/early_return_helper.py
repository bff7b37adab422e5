# a helper returns early on a cached-looking input, otherwise generates
# args: {"items": [{"name": "teapot", "image": null}, {"name": "kettle", "image": null}]}
async def ensure_image(ctx, item):
    if item.get("image"):
        return item["image"]
    if not item.get("name"):
        return None
    image = await ctx.run("image.generate", {"prompt": f"catalogue photo of a {item['name']}", "size": "1024x1024"})
    return image["artifact"]


async def orchestrate(ctx, args):
    refs = await ctx.parallel([ensure_image(ctx, it) for it in args["items"][:6]])
    return {"images": [r for r in refs if r]}
