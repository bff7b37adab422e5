# a seasonal collection: a dict of season -> prompt built by comprehension
# args: {"product": "a picnic blanket"}
SEASONS = ["spring", "summer", "autumn", "winter"]


async def orchestrate(ctx, args):
    prompts = {season: f"{args['product']} in a {season} setting" for season in SEASONS}
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": prompts[s], "size": "1536x1024"}) for s in SEASONS
    ])
    collection = {s: img["artifact"] for s, img in zip(SEASONS, images)}
    return {"collection": collection}
