# generate meme captions, keep the shortest two, edit them onto one image
# args: {"situation": "when the build passes on the first try"}
async def orchestrate(ctx, args):
    base = await ctx.run("image.generate", {"prompt": "surprised cat, reaction image", "size": "1024x1024"})
    options = await ctx.parallel([
        ctx.run("text.generate", {"prompt": f"Meme caption #{i}: {args['situation']}", "max_tokens": 14}) for i in range(3)
    ])
    captions = sorted([o["text"] for o in options], key=len)[:2]
    memes = []
    for caption in captions:
        meme = await ctx.run("image.edit", {"image": base["artifact"], "prompt": f"add impact-font caption: {caption}"})
        memes.append(meme["artifact"])
    return {"memes": memes, "captions": captions}
