# a two-stage pipeline: each prompt is drawn, then reviewed
# args: {"prompts": ["a glass of iced tea", "a stack of pancakes", "a bowl of ramen", "a lemon tart"]}
async def orchestrate(ctx, args):
    async def draw(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        return image["artifact"]

    async def judge(ref):
        review = await ctx.run("review.visual", {"image": ref, "criteria": "appetizing, well lit"})
        return {"image": ref, "verdict": review["verdict"], "score": review["score"]}

    results = await ctx.pipeline(args["prompts"][:5], draw, judge)
    return {"results": results}
