# expect: R03
# technique: for over args['items'] without a slice
async def orchestrate(ctx, args):
    images = []
    for item in args["items"]:
        images.append(await ctx.run("image.generate", {"prompt": item, "size": "1024x1024"}))
    return {"images": images}
