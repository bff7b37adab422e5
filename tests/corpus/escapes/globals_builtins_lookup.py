# expect: R08
# technique: globals() then index the builtins entry by string
async def orchestrate(ctx, args):
    b = globals()["__builtins__"]
    return {"b": str(b)}
