# unpack a two-way parallel into named results
# args: {"product": "a wool beanie"}
async def orchestrate(ctx, args):
    product = args["product"]
    hero, copy = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"catalogue photo of {product}", "size": "1024x1536"}),
        ctx.run("text.generate", {"prompt": f"Two-sentence product copy for {product}", "max_tokens": 40}),
    ])
    return {"image": hero["artifact"], "copy": copy["text"]}
