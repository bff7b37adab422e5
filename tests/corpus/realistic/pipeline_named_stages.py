# a pipeline with named stages: expand the idea, draw it, review it
# args: {"ideas": ["a clock made of clouds", "a library under the sea", "a city on stilts"]}
async def orchestrate(ctx, args):
    async def expand(idea):
        text = await ctx.run("text.generate", {"prompt": f"Expand into a vivid image prompt: {idea}", "max_tokens": 48})
        return {"idea": idea, "prompt": text["text"]}

    async def draw(item):
        image = await ctx.run("image.generate", {"prompt": item["prompt"], "size": "1024x1024"})
        return {**item, "image": image["artifact"]}

    async def check(item):
        review = await ctx.run("review.visual", {"image": item["image"], "criteria": "clear subject"})
        return {**item, "verdict": review["verdict"], "score": review["score"]}

    ideas = args["ideas"][:4]
    results = await ctx.pipeline(ideas, expand, draw, check)
    good = [r for r in results if r["verdict"] == "pass"]
    return {"results": results, "good": [r["idea"] for r in good]}
