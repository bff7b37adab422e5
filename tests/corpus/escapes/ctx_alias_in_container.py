# expect: R02|R07
# technique: put ctx in a list and call run through the element
async def orchestrate(ctx, args):
    box = [ctx]
    image = await box[0].run("image.generate", {"prompt": "a lighthouse at dusk", "size": "1024x1024"})
    return {"image": image}
