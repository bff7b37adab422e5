# one image, captions in several languages, returned as a dict
# args: {"prompt": "a picnic on a hill", "languages": ["English", "Spanish", "Japanese"]}
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1536x1024"})
    languages = args.get("languages", ["English"])[:5]
    texts = await ctx.parallel([
        ctx.run("text.generate", {"prompt": f"Caption in {lang} for: {args['prompt']}", "max_tokens": 20})
        for lang in languages
    ])
    captions = {lang: t["text"] for lang, t in zip(languages, texts)}
    return {"image": image["artifact"], "captions": captions}
