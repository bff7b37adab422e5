# review each storyboard frame against its own beat as criteria
# args: {"brief": "a day in the life of a lighthouse keeper"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4, "style": "painterly"})
    out = []
    for shot in plan["shots"][:4]:
        image = await ctx.run("image.generate", {"prompt": shot["prompt"], "size": "1536x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": f"conveys the {shot['beat']} beat"})
        out.append({"beat": shot["beat"], "verdict": review["verdict"], "reasons": review["reasons"]})
    failed = [o["beat"] for o in out if o["verdict"] == "fail"]
    return {"frames": out, "failed_beats": failed}
