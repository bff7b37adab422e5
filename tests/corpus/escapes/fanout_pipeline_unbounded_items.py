# expect: R05
# technique: ctx.pipeline over unsliced items
async def orchestrate(ctx, args):
    async def draw(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    images = await ctx.pipeline(args["prompts"], draw)
    return {"images": images}
