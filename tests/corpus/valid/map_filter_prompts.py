# map and filter with builtins over a bounded slice
# args: {"raw": ["  a blue door ", "", " a yellow bike", " ", "a green gate  "]}
def tidy(text):
    return text.strip()


async def orchestrate(ctx, args):
    cleaned = list(filter(None, map(tidy, args["raw"][:6])))
    images = []
    for prompt in cleaned[:6]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        images.append(image["artifact"])
    return {"prompts": cleaned, "images": images}
