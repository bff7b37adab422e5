# colour variants of one product, results keyed by colour
# args: {"product": "a ceramic mug", "colours": ["sage", "terracotta", "navy"]}
async def orchestrate(ctx, args):
    colours = args["colours"][:4]
    results = {}
    for colour in colours:
        image = await ctx.run("image.generate", {"prompt": f"{colour} {args['product']} on a white table", "size": "1024x1024"})
        results[colour] = image["artifact"]
    reviews = await ctx.parallel([ctx.run("review.visual", {"image": ref}) for ref in results.values()])
    verdicts = {colour: r["verdict"] for colour, r in zip(results, reviews)}
    return {"images": results, "verdicts": verdicts}
