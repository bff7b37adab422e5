# apply a fixed chain of edits to one generated image
# args: {"prompt": "a plain white mug on a table"}
EDITS = ["add steam rising from the mug", "warm the colour grade", "add a soft vignette"]


async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    current = image["artifact"]
    history = [current]
    for instruction in EDITS:
        edited = await ctx.run("image.edit", {"image": current, "prompt": instruction})
        current = edited["artifact"]
        history.append(current)
    return {"final": current, "history": history}
