# expect: R02|R07
# technique: list the ctx object's instance attributes through __dict__
async def orchestrate(ctx, args):
    state = ctx.__dict__
    return {"fields": list(state.keys())}
