# guard against an unexpected result shape with isinstance
# args: {"topic": "rainforest canopy"}
async def orchestrate(ctx, args):
    text = await ctx.run("text.generate", {"prompt": f"Three adjectives for {args['topic']}"})
    body = text.get("text") if isinstance(text, dict) else str(text)
    words = body.split()[:3]
    image = await ctx.run("image.generate", {"prompt": args["topic"] + ", " + " ".join(words), "size": "1024x1024"})
    return {"words": words, "image": image["artifact"]}
