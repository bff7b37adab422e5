# a three-stage pipeline: describe, draw, review
# args: {"topics": ["tidal pools", "alpine lakes", "salt flats"]}
async def orchestrate(ctx, args):
    async def describe(topic):
        text = await ctx.run("text.generate", {"prompt": f"Describe {topic} as an image prompt.", "max_tokens": 60})
        return text["text"]

    async def draw(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
        return image["artifact"]

    async def review(ref):
        result = await ctx.run("review.visual", {"image": ref})
        return {"image": ref, "verdict": result["verdict"]}

    return {"results": await ctx.pipeline(args["topics"][:3], describe, draw, review)}
