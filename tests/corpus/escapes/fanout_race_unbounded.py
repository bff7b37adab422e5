# expect: R03 R05
# technique: ctx.race over a comprehension of unsliced input
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("text.generate", {"prompt": prompt})
    first = await ctx.race([gen(p) for p in args["prompts"]])
    return {"first": first}
