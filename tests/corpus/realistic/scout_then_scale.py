# scout with cheap small renders, then render the best prompt at full size
# args: {"prompts": ["a jazz club", "a blues bar", "a piano lounge"]}
async def orchestrate(ctx, args):
    prompts = args["prompts"][:3]

    async def scout(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        return {"prompt": prompt, "score": review["score"]}

    scouting = await ctx.parallel([scout(p) for p in prompts])
    winner = sorted(scouting, key=lambda s: s["score"])[-1]
    final = await ctx.run("image.generate", {"prompt": winner["prompt"], "size": "1536x1024"})
    return {"winner": winner, "final": final["artifact"]}
