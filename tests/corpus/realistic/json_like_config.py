# a config dict at module level drives the run
# args: {"brief": "launch visuals for a meditation app"}
CONFIG = {"shots": 3, "size": "1024x1536", "style": "calm pastel", "review": True}


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": CONFIG["shots"], "style": CONFIG["style"]})
    frames = []
    for shot in plan["shots"][:3]:
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": CONFIG["size"]})
        entry = {"index": shot["index"], "image": image["artifact"]}
        if CONFIG["review"]:
            review = await ctx.run("review.visual", {"image": image["artifact"]})
            entry["verdict"] = review["verdict"]
        frames.append(entry)
    return {"frames": frames}
