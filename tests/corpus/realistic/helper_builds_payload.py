# a sync helper builds the payload dict with defaults
# args: {"prompt": "a carved wooden spoon"}
def image_payload(prompt, size="1024x1024", seed=None):
    payload = {"prompt": prompt, "size": size}
    if seed is not None:
        payload["seed"] = seed
    return payload


async def orchestrate(ctx, args):
    first = await ctx.run("image.generate", image_payload(args["prompt"]))
    second = await ctx.run("image.generate", image_payload(args["prompt"], seed=5))
    return {"images": [first["artifact"], second["artifact"]]}
