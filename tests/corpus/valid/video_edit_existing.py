# edit a stored video clip with an instruction built from args
# args: {"video": "sha256:abababababababababababababababababababababababababababababababab", "instruction": "Trim the intro and warm the colours"}
async def orchestrate(ctx, args):
    instruction = args["instruction"].strip()
    edited = await ctx.run("video.edit", {"video": args["video"], "prompt": instruction})
    return {"edited": edited}
