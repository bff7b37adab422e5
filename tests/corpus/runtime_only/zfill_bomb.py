# caught-by: memory
# technique: an allowlisted string method (zfill) asked for a billion characters
# note: the method is on R07's allowlist; its argument is a value, which no rule bounds.
async def orchestrate(ctx, args):
    code = "7".zfill(10**9)
    return {"n": len(code)}
