# expect: R07
# technique: call the unbound str.format with an attribute-walking template
async def orchestrate(ctx, args):
    leaked = str.format("{0.__class__}", ctx)
    return {"leaked": leaked}
