# expect: R07
# technique: use the pickle protocol __reduce_ex__ to get a reconstructor callable
async def orchestrate(ctx, args):
    parts = args.__reduce_ex__(2)
    return {"parts": str(parts)}
