# render prompts in two batches of at most three, one parallel call per batch
# args: {"prompts": ["a", "b", "c", "d", "e"]}
BATCH = 3


async def orchestrate(ctx, args):
    prompts = [f"abstract shape study {p}" for p in args["prompts"][:6]]
    first = prompts[:BATCH]
    second = prompts[BATCH:2 * BATCH]
    out = []
    for batch in [first, second]:
        results = await ctx.parallel([
            ctx.run("image.generate", {"prompt": p, "size": "512x512"}) for p in batch[:BATCH]
        ])
        out.extend(r["artifact"] for r in results)
    return {"images": out}
