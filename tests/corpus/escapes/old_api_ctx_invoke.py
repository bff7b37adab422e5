# expect: R02
# technique: the retired ctx.invoke
async def orchestrate(ctx, args):
    text = await ctx.invoke("text.generate", {"prompt": "write a tagline"})
    return {"text": text}
