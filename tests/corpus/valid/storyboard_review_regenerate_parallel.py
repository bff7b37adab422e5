# per-shot generate/review/regenerate loops, run in parallel
# args: {"brief": "a travel ad for a mountain railway"}
MAX_SHOTS = 4
MAX_TRIES = 2


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": MAX_SHOTS})

    async def shot_until_good(shot):
        ref = None
        for attempt in range(MAX_TRIES):
            image = await ctx.run("image.generate",
                                  {"prompt": shot["prompt"], "size": "1536x1024", "seed": attempt})
            ref = image["artifact"]
            review = await ctx.run("review.visual", {"image": ref})
            if review["verdict"] == "pass":
                return {"image": ref, "tries": attempt + 1}
        return {"image": ref, "tries": MAX_TRIES}

    return {"shots": await ctx.parallel([shot_until_good(s) for s in plan["shots"][:MAX_SHOTS]])}
