"""Four shots; the fourth size is one the provider does not support (the E5 failure)."""


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 4})
    sizes = ["1024x1024", "1024x1024", "1024x1024", "999x999"]
    images = []
    for i in range(4):
        image = await ctx.run("image.generate", {"prompt": plan["shots"][i]["prompt"], "size": sizes[i]})
        images.append(image)
    return images
