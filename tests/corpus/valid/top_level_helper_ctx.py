# a top-level helper that receives ctx and is called from a loop
# args: {"prompts": ["harbour at dawn", "harbour at noon", "harbour at night"]}
async def render(ctx, prompt, size):
    image = await ctx.run("image.generate", {"prompt": prompt, "size": size})
    return image["artifact"]


async def orchestrate(ctx, args):
    out = []
    for prompt in args["prompts"][:3]:
        out.append(await render(ctx, prompt, "1024x1536"))
    return {"images": out}
