# expect: R05
# technique: a bounded list of coroutines concatenated with an input list
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    return await ctx.parallel([gen(p) for p in args["prompts"][:4]] + args["more"])
