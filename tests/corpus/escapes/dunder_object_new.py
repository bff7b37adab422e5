# expect: R07 R08
# technique: instantiate through object.__new__
async def orchestrate(ctx, args):
    thing = object.__new__(object)
    return {"t": str(thing)}
