# helpers with type annotations, the way typed code is usually written
# args: {"prompts": ["a clay vase", "a glass vase"]}
async def render(ctx, prompt: str, size: str = "1024x1024") -> str:
    image = await ctx.run("image.generate", {"prompt": prompt, "size": size})
    return image["artifact"]


async def review(ctx, ref: str) -> dict:
    result = await ctx.run("review.visual", {"image": ref})
    return {"image": ref, "verdict": result["verdict"], "score": result["score"]}


async def orchestrate(ctx, args):
    prompts: list[str] = args["prompts"][:4]
    refs: list[str] = []
    for p in prompts:
        refs.append(await render(ctx, p))
    reviews = await ctx.parallel([review(ctx, r) for r in refs])
    return {"reviews": reviews}
