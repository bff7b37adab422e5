# caught-by: memory
# technique: a string repeated by a constant factor allocates gigabytes; no loop, no fanout, no rule
# note: the checker's rules are about effects, order and iteration; allocation size is the sandbox's
#       address-space limit (RLIMIT_AS) to enforce, which kills the child with MemoryError.
async def orchestrate(ctx, args):
    blob = "a" * 10**9
    return {"n": len(blob)}
