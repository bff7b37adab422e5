# collect results in a dict keyed by shot label, with dict methods
# args: {"labels": ["opening", "middle", "closing"]}
async def orchestrate(ctx, args):
    results = {}
    for label in args["labels"][:3]:
        text = await ctx.run("text.generate", {"prompt": f"Describe the {label} shot of a cooking show."})
        results[label] = text["text"]
    merged = results.copy()
    merged.update({"count": len(results)})
    return merged
