# expect: R03 R05
# technique: ctx.parallel over a comprehension of unsliced input
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    images = await ctx.parallel([gen(p) for p in args["prompts"]])
    return {"images": images}
