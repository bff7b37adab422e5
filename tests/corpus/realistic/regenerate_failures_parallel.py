# generate a batch, then regenerate only the failures in a second parallel wave
# args: {"prompts": ["a teacup", "a teapot", "a sugar bowl", "a milk jug"]}
async def orchestrate(ctx, args):
    prompts = args["prompts"][:4]
    first = await ctx.parallel([
        ctx.run("image.generate", {"prompt": p, "size": "512x512"}) for p in prompts
    ])
    reviews = await ctx.parallel([
        ctx.run("review.visual", {"image": img["artifact"]}) for img in first
    ])
    redo = [p for p, r in zip(prompts, reviews) if r["verdict"] != "pass"]
    second = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"{p}, brighter, more contrast", "size": "512x512", "seed": 99})
        for p in redo
    ])
    return {"first": [i["artifact"] for i in first], "redone": [i["artifact"] for i in second]}
