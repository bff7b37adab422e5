# expect: R03
# technique: a bounded list extended with += inside its own loop
async def orchestrate(ctx, args):
    queue = ["seed"]
    for item in queue:
        queue += [item]
        await ctx.run("text.generate", {"prompt": item})
    return {}
