# write a blog post, pick headings, illustrate each heading
# args: {"topic": "composting on a balcony"}
async def orchestrate(ctx, args):
    post = await ctx.run("text.generate", {"prompt": f"Blog post with short paragraphs about {args['topic']}", "max_tokens": 200})
    paragraphs = [p for p in post["text"].split(". ") if len(p) > 20][:3]
    illustrations = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"flat illustration: {p[:120]}", "size": "1536x1024"}) for p in paragraphs
    ])
    return {
        "post": post["text"],
        "illustrations": [{"paragraph": p, "image": i["artifact"]} for p, i in zip(paragraphs, illustrations)],
    }
