# build a status dict step by step and return it, including the list of failures
# args: {"prompts": ["a cactus", "a bonsai", "an orchid", "a fern"]}
async def orchestrate(ctx, args):
    status = {"ok": [], "failed": [], "errors": []}
    for prompt in args["prompts"][:4]:
        try:
            image = await ctx.run("image.generate", {"prompt": f"botanical plate of {prompt}", "size": "1024x1536"})
            status["ok"].append(image["artifact"])
        except Exception as exc:
            status["failed"].append(prompt)
            status["errors"].append(str(exc))
    status["summary"] = f"{len(status['ok'])} ok, {len(status['failed'])} failed"
    return status
