# validate inputs with raise, then render
# args: {"prompt": "a pair of running shoes", "size": "1024x1024"}
ALLOWED_SIZES = ["512x512", "1024x1024", "1024x1536", "1536x1024"]


async def orchestrate(ctx, args):
    size = args.get("size", "1024x1024")
    if size not in ALLOWED_SIZES:
        raise ValueError(f"unsupported size {size}; use one of {', '.join(ALLOWED_SIZES)}")
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        raise ValueError("prompt must be a non-empty string")
    image = await ctx.run("image.generate", {"prompt": prompt, "size": size})
    return {"image": image["artifact"]}
