# expect: R03
# technique: a bounded list grown inside its own loop by a helper that receives it
def grow(items, item):
    items.append(item)


async def orchestrate(ctx, args):
    queue = ["seed"]
    for item in queue:
        grow(queue, item)
        await ctx.run("text.generate", {"prompt": item})
    return {}
