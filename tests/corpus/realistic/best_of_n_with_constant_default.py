# best-of-n helper with the n and size defaults taken from module constants
# args: {"prompt": "a bowl of ramen, overhead"}
N_CANDIDATES = 3
SIZE = "1024x1024"


async def best_of(ctx, prompt, n=N_CANDIDATES, size=SIZE):
    candidates = []
    for seed in range(n):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": size, "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        candidates.append((review["score"], image["artifact"]))
    candidates.sort(reverse=True)
    return candidates[0][1]


async def orchestrate(ctx, args):
    best = await best_of(ctx, args["prompt"])
    return {"best": best}
