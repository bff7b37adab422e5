# walk a bounded slice backwards
# args: {"beats": ["setup", "conflict", "climax", "resolution"]}
async def orchestrate(ctx, args):
    lines = []
    for beat in reversed(args["beats"][:4]):
        text = await ctx.run("text.generate", {"prompt": f"One line for the {beat} beat.", "max_tokens": 25})
        lines.append(text["text"])
    return {"lines": lines}
