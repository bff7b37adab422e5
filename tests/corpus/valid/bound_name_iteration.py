# a name bound once to a slice drives both a loop and a fanout
# args: {"shots": ["a rooftop garden", "a subway platform", "a night market", "a riverside path"]}
async def orchestrate(ctx, args):
    shots = args["shots"][:4]
    captions = []
    for shot in shots:
        captions.append(shot.capitalize())

    async def draw(shot):
        image = await ctx.run("image.generate", {"prompt": shot, "size": "1024x1024"})
        return image["artifact"]

    jobs = [draw(shot) for shot in shots]
    images = await ctx.parallel(jobs)
    return {"captions": captions, "images": images}
