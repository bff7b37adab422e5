# try/except/else/finally around an edit, recording what happened
# args: {"prompt": "a faded polaroid of a beach"}
async def orchestrate(ctx, args):
    log = []
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": "1024x1024"})
    result = image["artifact"]
    try:
        edited = await ctx.run("image.edit", {"image": result, "prompt": "restore colours"})
    except Exception as exc:
        log.append(f"edit failed: {exc}")
    else:
        result = edited["artifact"]
        log.append("edited")
    finally:
        log.append("done")
    return {"image": result, "log": log}
