# expect: R07
# technique: call __getattribute__ to read a private ctx field by string
async def orchestrate(ctx, args):
    broker = ctx.__getattribute__("_broker")
    return {"b": str(broker)}
