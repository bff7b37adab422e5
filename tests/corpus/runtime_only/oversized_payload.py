# caught-by: schema
# technique: a capability payload far larger than the input schema allows (prompt maxLength 20000)
# note: payload values are data; the broker validates every payload against the capability's
#       input schema before dispatch and refuses it (PayloadInvalid), so nothing is paid.
async def orchestrate(ctx, args):
    text = await ctx.run("text.generate", {"prompt": "word " * 100000})
    return {"text": text}
