# expect: R02|R07
# technique: pass ctx to a helper whose parameter has another name
async def render(engine, prompt):
    return await engine.run("image.generate", {"prompt": prompt, "size": "1024x1024"})


async def orchestrate(ctx, args):
    image = await render(ctx, "a lighthouse at dusk")
    return {"image": image}
