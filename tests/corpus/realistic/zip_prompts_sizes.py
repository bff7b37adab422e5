# pair prompts with sizes by position
# args: {"prompts": ["a billboard", "a phone wallpaper", "a web banner"]}
SIZES = ["1536x1024", "1024x1536", "1536x1024"]


async def orchestrate(ctx, args):
    pairs = list(zip(args["prompts"], SIZES))
    images = []
    for prompt, size in pairs:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": size})
        images.append({"prompt": prompt, "size": size, "image": image["artifact"]})
    return {"images": images}
