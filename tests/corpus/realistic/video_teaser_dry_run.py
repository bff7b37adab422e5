# plan shots, then request a short video clip per shot (catalog-only, dry run)
# args: {"brief": "a teaser for a board game night"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 3})
    clips = []
    for shot in plan["shots"][:3]:
        clip = await ctx.run("video.generate", {"prompt": shot["prompt"], "duration_s": shot["duration_s"]})
        clips.append(clip)
    return {"clips": clips}
