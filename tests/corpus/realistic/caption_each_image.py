# render images then write a caption for each result
# args: {"topics": ["a mountain hut", "a fishing village", "a desert road"]}
async def orchestrate(ctx, args):
    topics = args["topics"][:3]
    results = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"travel poster of {t}", "size": "1024x1536"})
        for t in topics
    ])
    captions = []
    for topic, result in zip(topics, results):
        text = await ctx.run("text.generate", {
            "prompt": f"Write a six-word caption for a poster of {topic}.",
            "max_tokens": 12,
        })
        captions.append({"topic": topic, "image": result["artifact"], "caption": text["text"]})
    return {"posters": captions}
