# extract keywords from generated text, de-duplicate, render icons for the first few
# args: {"topic": "urban cycling"}
async def orchestrate(ctx, args):
    text = await ctx.run("text.generate", {"prompt": f"Keywords about {args['topic']}", "max_tokens": 40})
    words = [w.strip(".,").lower() for w in text["text"].split() if len(w) > 4]
    keywords = sorted(set(words))[:4]
    icons = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"flat icon: {k}", "size": "512x512"}) for k in keywords
    ])
    return {"keywords": keywords, "icons": [i["artifact"] for i in icons]}
