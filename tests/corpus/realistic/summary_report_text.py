# render images, review them, and ask the text model for a short report
# args: {"prompts": ["a lighthouse", "a windmill", "a water tower"]}
async def orchestrate(ctx, args):
    prompts = args["prompts"][:4]
    rows = []
    for prompt in prompts:
        image = await ctx.run("image.generate", {"prompt": f"line drawing of {prompt}", "size": "512x512"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        rows.append(f"- {prompt}: {review['verdict']} ({review['score']:.2f})")
    report = await ctx.run("text.generate", {"prompt": "Summarise these review results:\n" + "\n".join(rows), "max_tokens": 60})
    return {"rows": rows, "report": report["text"]}
