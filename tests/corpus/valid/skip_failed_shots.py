# render what can be rendered: a shot whose call fails is counted and skipped
# args: {"shots": ["a windmill at dawn", "a tulip field", "a canal boat", "a cheese market", "a bicycle bridge"]}
async def orchestrate(ctx, args):
    images = []
    failed = 0
    for shot in args["shots"][:5]:
        try:
            image = await ctx.run("image.generate", {"prompt": shot, "size": "1536x1024"})
        except Exception:
            failed = failed + 1
            continue
        images.append(image["artifact"])
    return {"images": images, "failed": failed}
