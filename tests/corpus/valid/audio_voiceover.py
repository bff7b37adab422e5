# a voiceover script written by text.generate, then narrated
# args: {"topic": "how sourdough starter works"}
async def orchestrate(ctx, args):
    script = await ctx.run("text.generate",
                           {"prompt": f"Write a 20-second voiceover about {args['topic']}.", "max_tokens": 80})
    narration = await ctx.run("audio.generate", {"prompt": script["text"], "duration_s": 20})
    return {"script": script["text"], "narration": narration}
