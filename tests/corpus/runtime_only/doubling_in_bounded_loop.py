# caught-by: memory
# technique: a loop with a small static bound that doubles a string each time (2^40 bytes)
# note: R03 bounds the number of iterations (40 is fine), not the work per iteration.
async def orchestrate(ctx, args):
    text = "ab"
    for _ in range(40):
        text = text + text
    return {"n": len(text)}
