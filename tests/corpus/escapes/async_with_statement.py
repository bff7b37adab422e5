# expect: R09
# technique: async with calls __aenter__/__aexit__ on an arbitrary object
async def orchestrate(ctx, args):
    async with args["lock"]:
        pass
    return {}
