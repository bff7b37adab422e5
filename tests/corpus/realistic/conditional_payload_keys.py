# add optional payload keys only when they are given
# args: {"prompt": "a hummingbird at a feeder", "seed": 12}
async def orchestrate(ctx, args):
    payload = {"prompt": args["prompt"], "size": args.get("size", "1024x1024")}
    if "seed" in args:
        payload["seed"] = int(args["seed"])
    image = await ctx.run("image.generate", payload)
    criteria = args.get("criteria")
    review_payload = {"image": image["artifact"]}
    if criteria:
        review_payload["criteria"] = criteria
    review = await ctx.run("review.visual", review_payload)
    return {"image": image["artifact"], "verdict": review["verdict"]}
