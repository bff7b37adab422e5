# a dag whose middle task fans out over the storyboard
# args: {"brief": "a trailer for a cozy mystery novel"}
async def orchestrate(ctx, args):
    async def plan(deps):
        return await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 3})

    async def frames(deps):
        shots = deps["plan"]["shots"][:3]
        images = await ctx.parallel([
            ctx.run("image.generate", {"prompt": s["prompt"], "size": "1536x1024"}) for s in shots
        ])
        return [i["artifact"] for i in images]

    async def blurb(deps):
        text = await ctx.run("text.generate", {"prompt": f"Back-cover blurb: {args['brief']}", "max_tokens": 50})
        return text["text"]

    out = await ctx.dag({"plan": (plan, []), "frames": (frames, ["plan"]), "blurb": (blurb, [])})
    return {"frames": out["frames"], "blurb": out["blurb"]}
