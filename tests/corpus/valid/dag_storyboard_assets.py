# a literal dag: plan first, then a hero image and a tagline in parallel, then a summary
# args: {"brief": "launch of a solar-powered lantern"}
async def orchestrate(ctx, args):
    brief = args["brief"]

    async def plan(deps):
        return await ctx.run("storyboard.plan", {"brief": brief, "shots": 3})

    async def hero(deps):
        first = deps["plan"]["shots"][0]
        image = await ctx.run("image.generate", {"prompt": first["prompt"], "size": "1536x1024"})
        return image["artifact"]

    async def tagline(deps):
        text = await ctx.run("text.generate", {"prompt": f"A tagline for: {brief}", "max_tokens": 30})
        return text["text"]

    async def summary(deps):
        text = await ctx.run("text.generate",
                             {"prompt": f"Summarize the campaign '{deps['tagline']}' in one line."})
        return text["text"]

    results = await ctx.dag({
        "plan": (plan, []),
        "hero": (hero, ["plan"]),
        "tagline": (tagline, []),
        "summary": (summary, ["tagline", "hero"]),
    })
    return {"hero": results["hero"], "summary": results["summary"]}
