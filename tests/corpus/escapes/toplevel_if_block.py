# expect: R01
# technique: a top-level if statement chooses which orchestrate exists
if True:
    async def orchestrate(ctx, args):
        return {}
