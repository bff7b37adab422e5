# expect: R02|R07
# technique: alias ctx to another name and call run through the alias (no callsite is assigned)
async def orchestrate(ctx, args):
    c = ctx
    image = await c.run("image.generate", {"prompt": "a lighthouse at dusk", "size": "1024x1024"})
    return {"image": image}
