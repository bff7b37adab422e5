# plan a storyboard, then one image per shot over a bounded slice
# args: {"brief": "a thirty-second brand film for a coastal coffee roaster", "shots": 6}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 6})
    images = []
    for shot in plan["shots"][:6]:
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1536x1024"})
        images.append(image["artifact"])
    return {"images": images, "shots": len(images)}
