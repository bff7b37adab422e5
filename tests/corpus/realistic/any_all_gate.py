# publish only if all reviews pass; flag if any is very low
# args: {"prompts": ["a red bicycle", "a blue bicycle", "a green bicycle"]}
async def orchestrate(ctx, args):
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": p, "size": "1024x1024"}) for p in args["prompts"][:3]
    ])
    reviews = await ctx.parallel([ctx.run("review.visual", {"image": i["artifact"]}) for i in images])
    all_pass = all(r["verdict"] == "pass" for r in reviews)
    any_low = any(r["score"] < 0.3 for r in reviews)
    return {"publish": all_pass and not any_low, "scores": [r["score"] for r in reviews]}
