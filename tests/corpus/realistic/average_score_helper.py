# review a set of images and compute the average score with a helper
# args: {"prompts": ["a snowy owl", "a barn owl", "a tawny owl"]}
def average(values):
    if not values:
        return 0.0
    return round(sum(values) / len(values), 3)


async def orchestrate(ctx, args):
    prompts = args["prompts"][:5]
    scores = []
    for prompt in prompts:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        scores.append(review["score"])
    return {"average": average(scores), "scores": scores}
