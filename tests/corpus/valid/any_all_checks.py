# any/all over bounded comprehensions decide whether to write a summary
# args: {"prompts": ["a paper lantern", "a silk fan"]}
async def orchestrate(ctx, args):
    verdicts = []
    for prompt in args["prompts"][:2]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        verdicts.append(review["verdict"])
    all_ok = all([v == "pass" for v in verdicts[:2]])
    some_ok = any([v == "pass" for v in verdicts[:2]])
    summary = None
    if some_ok and not all_ok:
        text = await ctx.run("text.generate", {"prompt": "Explain a partial review pass to a client."})
        summary = text["text"]
    return {"verdicts": verdicts, "all_ok": all_ok, "summary": summary}
