# defensive reads of nested args with .get and defaults
# args: {"job": {"brief": "a rooftop concert", "options": {"shots": 2, "style": "grainy film"}}}
async def orchestrate(ctx, args):
    job = args.get("job", {})
    options = job.get("options", {})
    brief = job.get("brief", "an untitled scene")
    shots = int(options.get("shots", 2))
    style = options.get("style", "cinematic")
    plan = await ctx.run("storyboard.plan", {"brief": brief, "shots": max(1, min(shots, 4)), "style": style})
    frames = []
    for shot in plan["shots"][:4]:
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1536x1024"})
        frames.append(image["artifact"])
    return {"frames": frames}
