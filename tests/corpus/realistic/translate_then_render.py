# translate a prompt into English first, then render it
# args: {"prompt": "un phare sous la pluie", "language": "French"}
async def orchestrate(ctx, args):
    prompt = args["prompt"]
    if args.get("language", "English") != "English":
        translated = await ctx.run("text.generate", {"prompt": f"Translate from {args['language']} to English: {prompt}", "max_tokens": 30})
        prompt = translated["text"]
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    return {"prompt": prompt, "image": image["artifact"]}
