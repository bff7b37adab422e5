# render only the last three shots of the storyboard (the ending)
# args: {"brief": "a dog waiting for its owner at a train station"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 6})
    ending = plan["shots"][-3:]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": s["prompt"], "size": "1536x1024"}) for s in ending
    ])
    return {"ending": [{"beat": s["beat"], "image": i["artifact"]} for s, i in zip(ending, images)]}
