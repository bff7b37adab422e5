# ask for an outline, split it into lines, render the first few lines
# args: {"topic": "the life of a honeybee"}
async def orchestrate(ctx, args):
    outline = await ctx.run("text.generate", {"prompt": f"Outline in short sentences: {args['topic']}", "max_tokens": 80})
    sentences = [s.strip() for s in outline["text"].split(".") if s.strip()]
    chosen = sentences[:4]
    if not chosen:
        chosen = [args["topic"]]
    images = []
    for i, sentence in enumerate(chosen):
        image = await ctx.run("image.generate", {"prompt": f"watercolour: {sentence}", "size": "1024x1024", "seed": i})
        images.append(image["artifact"])
    return {"sentences": chosen, "images": images}
