# review a set of images and summarize the verdicts in text
# args: {"prompts": ["a violin", "a cello", "a harp"]}
async def orchestrate(ctx, args):
    lines = []
    for prompt in args["prompts"][:3]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        lines.append(f"{prompt}: {review['verdict']} ({review['score']:.2f})")
    report = await ctx.run("text.generate",
                           {"prompt": "Write a short QA report:\n" + "\n".join(lines), "max_tokens": 100})
    return {"lines": lines, "report": report["text"]}
