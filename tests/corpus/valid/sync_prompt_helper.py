# a sync helper that formats one shot, used inside a comprehension
# args: {"brief": "a cozy winter cabin advertisement"}
def shot_prompt(shot, style):
    beat = shot.get("beat", "scene")
    return f"{style}, {beat}: {shot['prompt']}".replace("  ", " ")


async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 5})
    prompts = [shot_prompt(shot, "film still") for shot in plan["shots"][:5]]

    async def gen(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
        return image["artifact"]

    return {"images": await ctx.parallel([gen(p) for p in prompts])}
