# A/B test two prompt phrasings, pick the winner by review score
# args: {"subject": "a stack of pancakes"}
async def orchestrate(ctx, args):
    variants = {
        "a": f"food photography of {args['subject']}, natural light",
        "b": f"{args['subject']} on a rustic table, editorial style",
    }

    async def score(label):
        image = await ctx.run("image.generate", {"prompt": variants[label], "size": "1024x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"label": label, "score": review["score"], "image": image["artifact"]}

    results = await ctx.parallel([score("a"), score("b")])
    winner = max(results, key=lambda r: r["score"])
    return {"winner": winner["label"], "results": results}
