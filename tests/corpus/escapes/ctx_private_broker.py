# expect: R02
# technique: read a private ctx attribute
async def orchestrate(ctx, args):
    return {"b": str(ctx._broker)}
