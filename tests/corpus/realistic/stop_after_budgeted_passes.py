# keep rendering until two images pass, at most five tries
# args: {"prompt": "a steaming bowl of pho"}
WANTED = 2
MAX_TRIES = 5


async def orchestrate(ctx, args):
    passed = []
    tries = 0
    for seed in range(MAX_TRIES):
        tries += 1
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        if review["verdict"] == "pass":
            passed.append(image["artifact"])
        if len(passed) >= WANTED:
            break
    return {"passed": passed, "tries": tries}
