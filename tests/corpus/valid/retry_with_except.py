# retry a call a bounded number of times, remembering the last error
# args: {"prompt": "a glass greenhouse at sunset"}
async def orchestrate(ctx, args):
    last_error = ""
    sizes = ["1536x1024", "1024x1024", "512x512"]
    for size in sizes:
        try:
            image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": size})
            return {"image": image["artifact"], "size": size}
        except Exception as exc:
            last_error = str(exc)
    return {"image": None, "error": last_error}
