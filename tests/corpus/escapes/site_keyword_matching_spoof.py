# expect: R10
# technique: pass the very _site the annotator would compute (still host-owned)
async def orchestrate(ctx, args):
    first = await ctx.run("text.generate", {"prompt": "tagline"}, _site="orchestrate/#0")
    return {"first": first}
