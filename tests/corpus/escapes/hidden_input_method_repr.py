# expect: R08
# technique: str() of a bound method puts a memory address ("... at 0x7f...") into a payload, like id()
async def orchestrate(ctx, args):
    nonce = str(args.get)
    text = await ctx.run("text.generate", {"prompt": f"seed text {nonce}"})
    return {"text": text}
