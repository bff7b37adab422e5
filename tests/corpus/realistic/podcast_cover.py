# a podcast episode: title, cover art, and a short audio teaser (dry run)
# args: {"episode": "why cities plant trees", "host": "Ada"}
async def orchestrate(ctx, args):
    title = await ctx.run("text.generate", {"prompt": f"Catchy podcast title about {args['episode']}", "max_tokens": 12})
    cover = await ctx.run("image.generate", {"prompt": f"podcast cover art, bold type area, theme: {args['episode']}", "size": "1024x1024"})
    teaser = await ctx.run("audio.generate", {"prompt": f"{args['host']} introduces: {title['text']}", "duration_s": 15})
    return {"title": title["text"], "cover": cover["artifact"], "teaser": teaser}
