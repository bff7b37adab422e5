# a dag with descriptive task names whose results are read back by name
# args: {"topic": "a night market in Taipei"}
async def orchestrate(ctx, args):
    topic = args["topic"]

    async def research(deps):
        notes = await ctx.run("text.generate", {"prompt": f"Five visual details of {topic}", "max_tokens": 60})
        return notes["text"]

    async def wide_shot(deps):
        image = await ctx.run("image.generate", {"prompt": f"wide shot of {topic}; {deps['research']}", "size": "1536x1024"})
        return image["artifact"]

    async def close_up(deps):
        image = await ctx.run("image.generate", {"prompt": f"close-up of street food at {topic}", "size": "1024x1024"})
        return image["artifact"]

    async def review_both(deps):
        reviews = await ctx.parallel([
            ctx.run("review.visual", {"image": deps["wide_shot"]}),
            ctx.run("review.visual", {"image": deps["close_up"]}),
        ])
        return [r["verdict"] for r in reviews]

    results = await ctx.dag({
        "research": (research, []),
        "wide_shot": (wide_shot, ["research"]),
        "close_up": (close_up, []),
        "review_both": (review_both, ["wide_shot", "close_up"]),
    })
    return {name: results[name] for name in ["wide_shot", "close_up", "review_both"]}
