# build the prompt list with a bounded comprehension, then loop over it
# args: {"items": ["sneaker", "backpack", "water bottle", "cap", "jacket", "watch"]}
async def orchestrate(ctx, args):
    prompts = [f"{item} on a white background, studio light" for item in args["items"][:5]]
    images = []
    for prompt in prompts:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        images.append(image["artifact"])
    return {"images": images}
