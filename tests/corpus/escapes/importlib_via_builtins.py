# expect: R07
# technique: index __builtins__ for __import__ and load importlib
async def orchestrate(ctx, args):
    loader = __builtins__["__import__"]
    importlib = loader("importlib")
    return {"m": str(importlib)}
