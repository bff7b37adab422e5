# expect: R03
# technique: iterate the list a capability returned, whose length the model controls
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": "a lighthouse film", "shots": 6})
    images = []
    for shot in plan["shots"]:
        images.append(await ctx.run("image.generate", {"prompt": str(shot), "size": "1024x1024"}))
    return {"images": images}
