# expect: R05
# technique: a statically bounded width that exceeds the envelope's max_fanout
# envelope: {"max_fanout": 16}
async def orchestrate(ctx, args):
    async def gen(i):
        return await ctx.run("text.generate", {"prompt": f"variant {i}"})
    texts = await ctx.parallel([gen(i) for i in range(40)])
    return {"texts": texts}
