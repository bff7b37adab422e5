# a sync helper turns storyboard shots into prompts; the prompts are rendered
# args: {"brief": "a documentary about urban beekeepers"}
MAX_SHOTS = 4


def shot_prompts(shots, style="documentary still"):
    return [f"{style}: {s['prompt']}" for s in shots[:MAX_SHOTS]]


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": MAX_SHOTS})
    prompts = shot_prompts(plan["shots"])
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": p, "size": "1536x1024"}) for p in prompts[:MAX_SHOTS]
    ])
    return {"prompts": prompts, "images": [i["artifact"] for i in images]}
