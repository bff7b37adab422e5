# try a wide size, fall back to square when the provider rejects it
# args: {"prompt": "a mountain road in autumn"}
async def orchestrate(ctx, args):
    try:
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1536x1024"})
    except Exception as exc:
        note = str(exc)
        image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
        return {"image": image["artifact"], "fallback": True, "reason": note}
    return {"image": image["artifact"], "fallback": False}
