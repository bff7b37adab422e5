# expect: R09
# technique: a helper that maps itself over a list inside a fanout
async def orchestrate(ctx, args):
    async def node(depth):
        await ctx.run("video.generate", {"prompt": "node", "duration_s": 5})
        return await ctx.parallel(list(map(node, [depth])))
    return await node(0)
