# a wedding invitation: illustration, wording, and a printable edit
# args: {"names": "Sam & Alex", "venue": "a lakeside barn", "palette": "dusty rose"}
async def orchestrate(ctx, args):
    art, wording = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"floral invitation border, {args['palette']}, {args['venue']}", "size": "1024x1536"}),
        ctx.run("text.generate", {"prompt": f"Formal invitation wording for {args['names']} at {args['venue']}", "max_tokens": 60}),
    ])
    printable = await ctx.run("image.edit", {"image": art["artifact"], "prompt": f"add centred text: {wording['text'][:200]}"})
    return {"invite": printable["artifact"], "wording": wording["text"]}
