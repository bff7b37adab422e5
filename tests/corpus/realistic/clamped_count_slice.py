# take as many shots as the user asks for, clamped to a safe range
# args: {"brief": "an unboxing video for headphones", "count": 3}
MAX_SHOTS = 6


async def orchestrate(ctx, args):
    count = max(1, min(int(args.get("count", 3)), MAX_SHOTS))
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": MAX_SHOTS})
    chosen = plan["shots"][:count]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": s["prompt"], "size": "1536x1024"}) for s in chosen
    ])
    return {"count": count, "images": [i["artifact"] for i in images]}
