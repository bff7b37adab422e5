# expect: R09
# technique: a helper that re-enters orchestrate
async def again(ctx, args):
    return await orchestrate(ctx, args)


async def orchestrate(ctx, args):
    if args.get("once"):
        return await again(ctx, {})
    return await ctx.run("text.generate", {"prompt": "x"})
