# storyboard, then the shots rendered in parallel by a nested helper
# args: {"brief": "a product teaser for a folding bicycle"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4, "style": "clean studio"})

    async def render(shot):
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1024x1024"})
        return image["artifact"]

    images = await ctx.parallel([render(shot) for shot in plan["shots"][:4]])
    return {"images": images}
