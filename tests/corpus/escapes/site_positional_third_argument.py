# expect: R02|R10
# technique: pass the callsite as a third positional argument instead of the _site keyword
async def orchestrate(ctx, args):
    image = await ctx.run("image.generate", {"prompt": "a lighthouse", "size": "1024x1024"},
                          "orchestrate/#0")
    return {"image": image}
