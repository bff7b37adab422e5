# group storyboard shots by beat, render one image per beat
# args: {"brief": "a heist movie trailer"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 6})
    by_beat = {}
    for shot in plan["shots"][:6]:
        by_beat.setdefault(shot["beat"], []).append(shot["prompt"])
    beats = sorted(by_beat)[:6]
    images = {}
    for beat in beats:
        prompt = by_beat[beat][0]
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
        images[beat] = image["artifact"]
    return {"beats": beats, "images": images}
