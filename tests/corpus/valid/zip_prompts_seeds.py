# pair prompts with a literal list of seeds
# args: {"prompts": ["a koi pond", "a bamboo grove", "a stone lantern", "a tea house"]}
SEEDS = [11, 22, 33, 44]


async def orchestrate(ctx, args):
    images = []
    for prompt, seed in zip(args["prompts"][:4], SEEDS):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024", "seed": seed})
        images.append(image["artifact"])
    return {"images": images}
