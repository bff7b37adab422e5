# a diamond-shaped literal dag: brief -> (visual, copy) -> layout note
# args: {"product": "a ceramic pour-over coffee set"}
async def orchestrate(ctx, args):
    async def brief(deps):
        text = await ctx.run("text.generate", {"prompt": f"A one-line creative brief for {args['product']}"})
        return text["text"]

    async def visual(deps):
        image = await ctx.run("image.generate", {"prompt": deps["brief"], "size": "1024x1536"})
        return image["artifact"]

    async def copy(deps):
        text = await ctx.run("text.generate", {"prompt": "Headline for: " + deps["brief"], "max_tokens": 16})
        return text["text"]

    async def layout(deps):
        text = await ctx.run("text.generate",
                             {"prompt": f"Layout note: headline '{deps['copy']}' over image {deps['visual']}"})
        return text["text"]

    out = await ctx.dag({
        "brief": (brief, []),
        "visual": (visual, ["brief"]),
        "copy": (copy, ["brief"]),
        "layout": (layout, ["visual", "copy"]),
    })
    return {"layout": out["layout"], "visual": out["visual"]}
