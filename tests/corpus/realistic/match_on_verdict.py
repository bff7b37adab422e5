# render, review, and decide what to do with a match statement on the verdict
# args: {"prompt": "a neon diner at midnight"}
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    review = await ctx.run("review.visual", {"image": image["artifact"]})
    match review["verdict"]:
        case "pass":
            return {"image": image["artifact"], "action": "publish"}
        case "fail":
            fixed = await ctx.run("image.edit", {"image": image["artifact"], "prompt": "brighten and add contrast"})
            return {"image": fixed["artifact"], "action": "edited", "reasons": review["reasons"]}
        case _:
            return {"image": image["artifact"], "action": "manual"}
