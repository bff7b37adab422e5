# expect: R12
# technique: a container created but never awaited
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    ctx.parallel([gen(p) for p in args["prompts"][:3]])
    return {}
