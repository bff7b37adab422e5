# validate the brief, return early when it is empty, otherwise plan and render
# args: {"brief": "a cooking show intro with a flaming wok"}
async def orchestrate(ctx, args):
    brief = str(args.get("brief", "")).strip()
    if not brief:
        return {"error": "empty brief"}
    if len(brief) > 500:
        brief = brief[:500]
    plan = await ctx.run("storyboard.plan", {"brief": brief, "shots": 3})
    first = plan["shots"][0]
    image = await ctx.run("image.generate", {"prompt": first["prompt"], "size": "1536x1024"})
    return {"brief": brief, "opening": image["artifact"]}
