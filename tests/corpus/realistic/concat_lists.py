# combine a fixed list of hero prompts with a few user prompts
# args: {"extra": ["a dog in a raincoat"]}
HEROES = ["a yellow umbrella in the rain", "puddles reflecting neon"]


async def orchestrate(ctx, args):
    prompts = HEROES + args.get("extra", [])[:2]
    images = await ctx.parallel([ctx.run("image.generate", {"prompt": p, "size": "1024x1536"}) for p in prompts])
    return {"images": [i["artifact"] for i in images], "prompts": prompts}
