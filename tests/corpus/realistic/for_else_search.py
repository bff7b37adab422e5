# search seeds for a passing image; for/else reports when none passed
# args: {"prompt": "a foggy pier at night"}
async def orchestrate(ctx, args):
    found = None
    for seed in [5, 17, 29, 41]:
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        if review["verdict"] == "pass":
            found = {"seed": seed, "image": image["artifact"]}
            break
    else:
        return {"found": None, "note": "no seed passed review"}
    return {"found": found}
