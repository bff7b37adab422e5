# a recipe card: text steps, one photo for each of the first steps
# args: {"dish": "shakshuka"}
async def orchestrate(ctx, args):
    steps_text = await ctx.run("text.generate", {"prompt": f"Numbered cooking steps for {args['dish']}", "max_tokens": 120})
    steps = [line.strip() for line in steps_text["text"].split(",") if line.strip()]
    photos = []
    for number, step in enumerate(steps[:3]):
        photo = await ctx.run("image.generate", {"prompt": f"step {number + 1} of cooking {args['dish']}: {step[:80]}", "size": "1024x1024"})
        photos.append(photo["artifact"])
    return {"dish": args["dish"], "steps": steps[:3], "photos": photos}
