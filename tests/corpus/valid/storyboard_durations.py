# sum the storyboard's durations to size a voiceover
# args: {"brief": "a sixty-second documentary teaser about bees"}
async def orchestrate(ctx, args):
    plan = await ctx.run("storyboard.plan", {"brief": args["brief"], "shots": 6})
    durations = [int(shot["duration_s"]) for shot in plan["shots"][:6]]
    total = min(sum(durations), 600)
    beats = ", ".join([shot["beat"] for shot in plan["shots"][:6]])
    voice = await ctx.run("audio.generate", {"prompt": f"Narrate: {beats}", "duration_s": max(total, 1)})
    return {"total_s": total, "voiceover": voice}
