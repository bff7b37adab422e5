# expect: R03
# technique: list.extend(xs, ys) grows xs without naming it as the receiver
async def orchestrate(ctx, args):
    queue = ["seed"]
    list.extend(queue, args["more"])
    for item in queue:
        await ctx.run("text.generate", {"prompt": item})
    return {}
