# a middle slice xs[2:8] is bounded by its width
# args: {"items": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]}
async def orchestrate(ctx, args):
    chosen = []
    for item in args["items"][2:8]:
        chosen.append(item.upper())
    text = await ctx.run("text.generate", {"prompt": "Name a product line: " + ", ".join(chosen)})
    return {"chosen": chosen, "name": text["text"]}
