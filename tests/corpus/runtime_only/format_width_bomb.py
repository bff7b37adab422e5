# caught-by: memory
# technique: an f-string format spec with a width of 10**9 pads one value to a gigabyte string
# note: a format spec is data to the rules (no attribute walk is possible through it).
async def orchestrate(ctx, args):
    padded = f"{1:>1000000000}"
    return {"n": len(padded)}
