# expect: R07
# technique: reach the builtins module through a helper's __globals__
def helper():
    return 1


async def orchestrate(ctx, args):
    b = helper.__globals__["__builtins__"]
    return {"b": len(b)}
