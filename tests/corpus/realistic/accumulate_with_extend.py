# accumulate artifacts from two waves with extend
# args: {"subject": "a paper lantern"}
async def orchestrate(ctx, args):
    artifacts = []
    wave_one = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"{args['subject']}, variant {i}", "size": "512x512", "seed": i}) for i in range(3)
    ])
    artifacts.extend([w["artifact"] for w in wave_one])
    wave_two = await ctx.parallel([
        ctx.run("image.edit", {"image": a, "prompt": "add warm glow"}) for a in artifacts[:3]
    ])
    artifacts.extend([w["artifact"] for w in wave_two])
    return {"artifacts": artifacts, "count": len(artifacts)}
