# plan a storyboard, render every shot in parallel, summarise durations
# args: {"brief": "a 30 second spot for a bicycle courier service", "shots": 5}
MAX_SHOTS = 8


async def orchestrate(ctx, args):
    count = min(int(args.get("shots", 4)), MAX_SHOTS)
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": max(count, 1)})
    shots = plan["shots"][:MAX_SHOTS]

    async def render(shot):
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1536x1024"})
        return {"index": shot["index"], "beat": shot["beat"], "image": image["artifact"]}

    frames = await ctx.parallel([render(s) for s in shots])
    total = sum(s["duration_s"] for s in shots)
    return {"frames": frames, "total_duration_s": total, "count": len(frames)}
