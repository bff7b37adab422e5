# book cover options: three concepts, each reviewed; the summary is a sorted list of tuples
# args: {"title": "The Salt Road", "genre": "historical fiction"}
CONCEPTS = ["a caravan at dusk", "a lone salt miner", "a map with a red route"]


async def orchestrate(ctx, args):
    covers = []
    for concept in CONCEPTS:
        image = await ctx.run("image.generate", {"prompt": f"{args['genre']} book cover, '{args['title']}', {concept}", "size": "1024x1536"})
        review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": "title area free"})
        covers.append((review["score"], concept, image["artifact"]))
    covers.sort(reverse=True)
    return {"options": [{"concept": c, "image": ref, "score": s} for s, c, ref in covers]}
