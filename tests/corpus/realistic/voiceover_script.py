# write a voiceover script, then dry-run audio generation for it
# args: {"product": "a solar lantern", "seconds": 20}
MAX_SECONDS = 60


async def orchestrate(ctx, args):
    seconds = max(1, min(int(args.get("seconds", 15)), MAX_SECONDS))
    script = await ctx.run("text.generate", {
        "prompt": f"A {seconds}-second upbeat voiceover for {args['product']}",
        "max_tokens": seconds * 3,
    })
    audio = await ctx.run("audio.generate", {"prompt": script["text"], "duration_s": seconds})
    return {"script": script["text"], "audio": audio}
