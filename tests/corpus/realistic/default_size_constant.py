# a helper whose size default is a module constant
# args: {"prompts": ["a koi pond at dawn", "a lantern festival"]}
DEFAULT_SIZE = "1024x1024"


async def make_image(ctx, prompt, size=DEFAULT_SIZE):
    result = await ctx.run("image.generate", {"prompt": prompt, "size": size})
    return result["artifact"]


async def orchestrate(ctx, args):
    images = []
    for prompt in args["prompts"][:4]:
        images.append(await make_image(ctx, prompt))
    wide = await make_image(ctx, args["prompts"][0], size="1536x1024")
    return {"images": images, "wide": wide}
