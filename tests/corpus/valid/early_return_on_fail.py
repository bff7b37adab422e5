# stop early when the first review fails
# args: {"prompts": ["a chrome toaster", "a chrome kettle", "a chrome blender"]}
async def orchestrate(ctx, args):
    done = []
    for prompt in args["prompts"][:3]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        if review["verdict"] != "pass":
            return {"done": done, "stopped_at": prompt, "reasons": review["reasons"]}
        done.append(image["artifact"])
    return {"done": done, "stopped_at": None}
