# read every dag result back in a loop over the result dict
# args: {"subject": "a tram in the rain"}
async def orchestrate(ctx, args):
    async def sketch(deps):
        image = await ctx.run("image.generate", {"prompt": f"pencil sketch of {args['subject']}", "size": "512x512"})
        return image["artifact"]

    async def painting(deps):
        image = await ctx.run("image.generate", {"prompt": f"oil painting of {args['subject']}", "size": "1024x1024"})
        return image["artifact"]

    results = await ctx.dag({"sketch": (sketch, []), "painting": (painting, [])})
    summary = []
    for name, ref in sorted(results.items()):
        summary.append(f"{name}={ref[:15]}")
    return {"results": results, "summary": summary}
