# expect: R08
# technique: probe ctx internals with hasattr
async def orchestrate(ctx, args):
    return {"has": hasattr(ctx, "_broker")}
