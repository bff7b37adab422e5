# index storyboard shots by number, render a chosen subset by index
# args: {"brief": "a cat burglar on the rooftops", "pick": [0, 2]}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    by_index = {s["index"]: s for s in plan["shots"][:4]}
    picks = [i for i in args.get("pick", [0])[:4] if i in by_index]
    images = {}
    for i in picks:
        image = await ctx.run("image.generate", {"prompt": by_index[i]["prompt"], "size": "1536x1024"})
        images[str(i)] = image["artifact"]
    return {"images": images}
