# game sprites for a list of items crossed with two states
# args: {"items": ["sword", "shield", "potion"]}
STATES = ["idle", "highlighted"]


async def orchestrate(ctx, args):
    items = args["items"][:4]
    requests = [(item, state) for item in items for state in STATES]
    sprites = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"16-bit sprite of a {item}, {state} state", "size": "512x512"})
        for item, state in requests
    ])
    sheet = {}
    for (item, state), sprite in zip(requests, sprites):
        sheet.setdefault(item, {})[state] = sprite["artifact"]
    return {"sheet": sheet}
