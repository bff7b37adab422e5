# expect: R05
# technique: a list repeated by an input-derived factor
async def orchestrate(ctx, args):
    async def gen():
        return await ctx.run("text.generate", {"prompt": "tagline"})
    jobs = [gen] * args["copies"]
    texts = await ctx.parallel([job() for job in jobs])
    return {"texts": texts}
