# expect: R08
# technique: alias getattr to an innocent name first
async def orchestrate(ctx, args):
    fetch = getattr
    broker = fetch(ctx, "_" + "broker")
    return {"b": str(broker)}
