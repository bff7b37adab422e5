# a music video plan: storyboard, then a dry-run clip per shot, durations summed
# args: {"song": "a slow indie ballad about leaving home"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": f"music video for {args['song']}", "shots": 4, "style": "16mm film"})
    shots = plan["shots"][:4]
    clips = await ctx.parallel([
        ctx.run("video.generate", {"prompt": s["prompt"], "duration_s": s["duration_s"]}) for s in shots
    ])
    total = sum(s["duration_s"] for s in shots)
    return {"clips": clips, "total_s": total, "dry_run": all(c.get("dry_run") for c in clips)}
