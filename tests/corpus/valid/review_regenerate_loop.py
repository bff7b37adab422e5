# generate each shot, review it, regenerate with a new seed until it passes (bounded tries)
# args: {"shots": ["a red kite over dunes", "a lantern in fog", "a fox in snow"]}
MAX_TRIES = 3


async def orchestrate(ctx, args):
    accepted = []
    for prompt in args["shots"][:4]:
        best = None
        for attempt in range(MAX_TRIES):
            image = await ctx.run("image.generate",
                                  {"prompt": prompt, "size": "1024x1024", "seed": 100 + attempt})
            review = await ctx.run("review.visual", {"image": image["artifact"]})
            best = image["artifact"]
            if review["verdict"] == "pass":
                break
        accepted.append(best)
    return {"images": accepted}
