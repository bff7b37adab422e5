# expect: R03
# technique: a sort key lambda appends once per sorted item, a loop the loops around it do not show
async def orchestrate(ctx, args):
    queue = []
    ranked = sorted(args["items"][:1000], key=lambda item: queue.append(item))
    for item in queue:
        await ctx.run("text.generate", {"prompt": str(item)})
    return {"n": len(ranked)}
