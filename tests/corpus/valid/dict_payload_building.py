# build payloads as dicts, copy and extend them
# args: {"prompt": "a vintage radio", "seed": 42}
BASE = {"size": "1024x1024"}


async def orchestrate(ctx, args):
    payload = BASE.copy()
    payload.update({"prompt": args["prompt"], "seed": int(args.get("seed", 0))})
    first = await ctx.run("image.generate", payload)
    second = await ctx.run("image.generate", {**payload, "seed": payload["seed"] + 1})
    return {"images": [first["artifact"], second["artifact"]]}
