# per-shot video clips (a catalog-only capability) over a bounded slice
# args: {"brief": "a timelapse of a city waking up"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 3})
    clips = []
    for shot in plan["shots"][:3]:
        clip = await ctx.run("video.generate", {"prompt": shot["prompt"], "duration_s": shot["duration_s"]})
        clips.append(clip)
    return {"clips": clips}
