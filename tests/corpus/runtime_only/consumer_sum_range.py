# caught-by: cpu
# technique: sum(range(10**9)): a billion iterations inside a builtin, with no loop syntax at all
# note: R03 bounds for-loops and comprehensions; a consumer builtin (sum, max, list, sorted, ...)
#       iterates in C. The CPU rlimit and the wall-clock timeout stop it.
async def orchestrate(ctx, args):
    total = sum(range(10**9))
    return {"total": total}
