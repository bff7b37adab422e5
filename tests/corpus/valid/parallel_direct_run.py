# capability calls handed straight to ctx.parallel (no helper)
# args: {"prompts": ["a maple leaf", "an oak leaf", "a ginkgo leaf"]}
async def orchestrate(ctx, args):
    results = await ctx.parallel(
        [ctx.run("image.generate", {"prompt": p, "size": "512x512"}) for p in args["prompts"][:3]]
    )
    return {"images": [r["artifact"] for r in results[:3]]}
