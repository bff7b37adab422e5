# a smoke test of the pipeline plumbing with the echo capability
# args: {"items": ["alpha", "beta", "gamma"]}
async def orchestrate(ctx, args):
    echoes = await ctx.parallel([ctx.run("echo", {"item": item, "n": i}) for i, item in enumerate(args["items"][:5])])
    seen = [e["item"] for e in echoes]
    return {"seen": seen, "ok": seen == args["items"][:5]}
