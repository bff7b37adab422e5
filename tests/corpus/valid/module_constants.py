# module-level literal constants drive the bounds and the style
# args: {"brief": "a short film about a night bakery"}
MAX_SHOTS = 6
STYLE = "moody chiaroscuro"
SIZE = "1536x1024"


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": MAX_SHOTS, "style": STYLE})
    images = []
    for shot in plan["shots"][:MAX_SHOTS]:
        image = await ctx.run("image.generate", {"prompt": f"{STYLE}: {shot['prompt']}", "size": SIZE})
        images.append(image["artifact"])
    return {"images": images}
