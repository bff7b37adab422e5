# a walrus binds the review while testing it
# args: {"prompt": "a stained glass window"}
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1536"})
    if (review := await ctx.run("review.visual", {"image": image["artifact"]}))["verdict"] == "pass":
        return {"image": image["artifact"], "score": review["score"]}
    fixed = await ctx.run("image.edit", {"image": image["artifact"], "prompt": "increase brightness"})
    return {"image": fixed["artifact"], "score": review["score"], "edited": True}
