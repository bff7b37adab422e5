# a small campaign as a dag: tagline and key visual in parallel, then a banner edit
# args: {"brand": "Northwind Teas", "season": "winter"}
async def orchestrate(ctx, args):
    brand = args["brand"]
    season = args.get("season", "spring")

    async def tagline(deps):
        text = await ctx.run("text.generate", {"prompt": f"A short {season} tagline for {brand}", "max_tokens": 16})
        return text["text"]

    async def key_visual(deps):
        image = await ctx.run("image.generate", {"prompt": f"{season} still life with tea, {brand} palette", "size": "1536x1024"})
        return image["artifact"]

    async def banner(deps):
        edited = await ctx.run("image.edit", {"image": deps["key_visual"], "prompt": f"add headline: {deps['tagline']}"})
        return edited["artifact"]

    out = await ctx.dag({
        "tagline": (tagline, []),
        "key_visual": (key_visual, []),
        "banner": (banner, ["tagline", "key_visual"]),
    })
    return {"tagline": out["tagline"], "banner": out["banner"]}
