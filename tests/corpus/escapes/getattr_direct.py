# expect: R08
# technique: getattr with a string attribute name
async def orchestrate(ctx, args):
    broker = getattr(ctx, "_broker")
    return {"b": str(broker)}
