# enumerate a bounded slice to number the shots in the prompts
# args: {"brief": "a day in the life of a lighthouse keeper"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 8})
    frames = []
    for i, shot in enumerate(plan["shots"][:8]):
        label = str(i + 1).zfill(2)
        image = await ctx.run("image.generate",
                              {"prompt": f"Shot {label}: {shot['prompt']}", "size": "1536x1024"})
        frames.append({"label": label, "image": image["artifact"]})
    return {"frames": frames}
