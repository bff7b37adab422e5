# caught-by: memory
# technique: list(range(10**9)) materializes a billion ints (tens of GB)
# note: the allocation happens inside a builtin; the address-space limit stops it.
async def orchestrate(ctx, args):
    numbers = list(range(10**9))
    return {"n": len(numbers)}
