# build a list of coroutine jobs with append, then run them together
# args: {"prompts": ["a red door", "a blue door", "a green door"]}
async def orchestrate(ctx, args):
    async def door(prompt, seed):
        image = await ctx.run("image.generate", {"prompt": f"front door photo: {prompt}", "size": "1024x1536", "seed": seed})
        return image["artifact"]

    jobs = []
    for i, prompt in enumerate(args["prompts"][:5]):
        jobs.append(door(prompt, i))
    doors = await ctx.parallel(jobs)
    return {"doors": doors}
