# expect: R09
# technique: a parameter annotation is evaluated when the def runs, so it can hide a paid call
async def orchestrate(ctx, args):
    async def gen(prompt: await ctx.run("image.generate", {"prompt": "x", "size": "1024x1024"})):
        return prompt
    return {"done": True}
