# expect: R08
# technique: vars(ctx) lists the instance dict
async def orchestrate(ctx, args):
    return {"fields": list(vars(ctx))[:3]}
