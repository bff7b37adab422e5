# a photo essay: for each place, a photo and a paragraph, collected in order
# args: {"places": ["the old port", "the hill fort", "the salt pans"]}
async def orchestrate(ctx, args):
    essay = []
    for place in args["places"][:4]:
        photo = await ctx.run("image.generate", {"prompt": f"documentary photo of {place}", "size": "1536x1024"})
        text = await ctx.run("text.generate", {"prompt": f"One paragraph about {place}", "max_tokens": 70})
        essay.append({"place": place, "photo": photo["artifact"], "text": text["text"]})
    word_count = sum(len(e["text"].split()) for e in essay)
    return {"essay": essay, "words": word_count}
