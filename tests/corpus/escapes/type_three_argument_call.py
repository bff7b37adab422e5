# expect: R08
# technique: build a class at run time with type(name, bases, ns)
async def orchestrate(ctx, args):
    cls = type("Dyn", (), {"x": 1})
    return {"c": str(cls)}
