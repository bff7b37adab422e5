# try a wide render first, fall back to square if the provider refuses
# args: {"prompt": "a panorama of a salt marsh"}
PREFERRED = "1536x1024"
FALLBACK = "1024x1024"


async def orchestrate(ctx, args):
    prompt = args["prompt"]
    try:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": PREFERRED})
        used = PREFERRED
    except Exception:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": FALLBACK})
        used = FALLBACK
    return {"image": image["artifact"], "size": used}
