# expect: R07
# technique: name the __builtins__ global directly
async def orchestrate(ctx, args):
    b = __builtins__
    return {"b": str(b)}
