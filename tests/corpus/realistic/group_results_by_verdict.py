# group the reviewed images into lists keyed by verdict
# args: {"prompt": "a field of sunflowers"}
async def orchestrate(ctx, args):
    groups = {"pass": [], "fail": []}
    for seed in range(4):
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024", "seed": seed})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        groups[review["verdict"]].append(image["artifact"])
    retouched = []
    for ref in groups["fail"][:4]:
        edited = await ctx.run("image.edit", {"image": ref, "prompt": "brighten"})
        retouched.append(edited["artifact"])
    return {"groups": groups, "retouched": retouched}
