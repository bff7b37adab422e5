# caught-by: memory
# technique: a list literal multiplied into a billion slots (8 GB of pointers)
# note: width of a data list is not a fanout; the address-space limit stops it.
async def orchestrate(ctx, args):
    cells = [0] * 10**9
    return {"n": len(cells)}
