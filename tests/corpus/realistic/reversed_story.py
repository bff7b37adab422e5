# tell a story backwards: render the storyboard in reverse order
# args: {"brief": "a melting snowman over one day"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    shots = plan["shots"][:4]
    frames = []
    for shot in reversed(shots):
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1024x1024"})
        frames.append(image["artifact"])
    return {"frames": frames}
