# the last four items, xs[-4:]
# args: {"frames": ["f1", "f2", "f3", "f4", "f5", "f6"]}
async def orchestrate(ctx, args):
    captions = []
    for frame in args["frames"][-4:]:
        caption = await ctx.run("text.generate", {"prompt": f"Caption for frame {frame}", "max_tokens": 20})
        captions.append(caption["text"])
    return {"captions": captions}
