# expect: R09
# technique: async for drives an arbitrary async iterator
async def orchestrate(ctx, args):
    out = []
    async for item in args["stream"]:
        out.append(item)
    return {"out": out}
