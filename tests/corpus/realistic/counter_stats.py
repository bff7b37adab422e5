# count pass/fail verdicts in a dict while reviewing a batch
# args: {"prompt": "a glass of iced coffee", "seeds": [1, 2, 3, 4, 5]}
async def orchestrate(ctx, args):
    counts = {"pass": 0, "fail": 0}
    details = []
    for seed in args["seeds"][:6]:
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "512x512", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        counts[review["verdict"]] = counts.get(review["verdict"], 0) + 1
        details.append({"seed": seed, "verdict": review["verdict"]})
    rate = counts["pass"] / max(1, len(details))
    return {"counts": counts, "pass_rate": round(rate, 2), "details": details}
