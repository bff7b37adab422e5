# a helper that retries on provider errors with a bounded number of attempts
# args: {"prompt": "an art deco hotel lobby"}
ATTEMPTS = 3
SIZES = ["1536x1024", "1024x1024", "512x512"]


async def generate_with_retry(ctx, prompt, attempts=ATTEMPTS):
    errors = []
    for i in range(attempts):
        try:
            result = await ctx.run("image.generate", {"prompt": prompt, "size": SIZES[i % len(SIZES)]})
            return {"image": result["artifact"], "errors": errors}
        except Exception as err:
            errors.append(str(err))
    return {"image": None, "errors": errors}


async def orchestrate(ctx, args):
    return await generate_with_retry(ctx, args["prompt"])
