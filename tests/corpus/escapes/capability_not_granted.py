# expect: R11
# technique: a catalog capability that the envelope does not grant
# envelope: {"grants": ["text.generate", "image.generate"]}
async def orchestrate(ctx, args):
    clip = await ctx.run("video.generate", {"prompt": "a lighthouse", "duration_s": 5})
    return {"clip": clip}
