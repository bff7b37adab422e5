# expect: R03
# technique: sum([], xs) returns xs itself, so growing the sum grows the list
async def orchestrate(ctx, args):
    queue = ["seed"]
    same = sum([], queue)
    same.extend(args["more"])
    for item in queue:
        await ctx.run("text.generate", {"prompt": item})
    return {}
