# index-based loop over a bounded list with range(len(...))
# args: {"prompts": ["a violin", "a cello", "a double bass"]}
async def orchestrate(ctx, args):
    prompts = args["prompts"][:4]
    images = []
    for i in range(len(prompts)):
        image = await ctx.run("image.generate", {"prompt": f"orchestra still life: {prompts[i]}", "size": "1024x1536", "seed": i})
        images.append(image["artifact"])
    return {"images": images}
