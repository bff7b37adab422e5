# a monthly newsletter header with a month-specific theme table
# args: {"month": "october", "publication": "The Garden Post"}
THEMES = {
    "january": "frosted branches",
    "april": "spring blossom",
    "july": "summer meadow",
    "october": "autumn leaves",
}


async def orchestrate(ctx, args):
    month = args.get("month", "january").lower()
    theme = THEMES.get(month, "seasonal botanicals")
    header = await ctx.run("image.generate", {"prompt": f"newsletter header for {args['publication']}: {theme}", "size": "1536x1024"})
    review = await ctx.run("review.visual", {"image": header["artifact"]})
    return {"month": month.title(), "theme": theme, "header": header["artifact"], "ok": review["verdict"] == "pass"}
