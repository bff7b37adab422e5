# expect: R02
# technique: take ctx.run as a value and call it later under another name
async def orchestrate(ctx, args):
    go = ctx.run
    image = await go("image.generate", {"prompt": "a lighthouse at dusk", "size": "1024x1024"})
    return {"image": image}
