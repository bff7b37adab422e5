# expect: R03
# technique: grow a bounded list through `(xs or [])`, a receiver that is not the list's name
async def orchestrate(ctx, args):
    queue = ["seed"]
    (queue or []).extend(args["more"])
    for item in queue:
        await ctx.run("text.generate", {"prompt": item})
    return {}
