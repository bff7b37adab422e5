# the paper's scout run: four scout shots in parallel through a nested helper
# args: {"scout_shots": ["dune at sunrise", "dune at noon", "dune at dusk", "dune by moonlight", "dune in a storm"]}
async def orchestrate(ctx, args):
    async def gen(s):
        return await ctx.run("image.generate", {"prompt": s, "size": "1024x1024"})
    return await ctx.parallel([gen(s) for s in args["scout_shots"][:4]])
