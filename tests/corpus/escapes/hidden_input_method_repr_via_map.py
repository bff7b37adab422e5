# expect: R08
# technique: the same memory address, reached by mapping str over a list that holds a bound method
async def orchestrate(ctx, args):
    nonce = "".join(map(str, [args.keys]))
    text = await ctx.run("text.generate", {"prompt": f"seed text {nonce}"})
    return {"text": text}
