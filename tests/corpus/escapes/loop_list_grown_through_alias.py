# expect: R03
# technique: a bounded list grown inside its own loop through a second name
async def orchestrate(ctx, args):
    queue = ["seed"]
    alias = queue
    for item in queue:
        alias.append(item)
        await ctx.run("text.generate", {"prompt": item})
    return {}
