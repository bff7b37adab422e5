# expect: R07
# technique: str.format with a field that walks attributes: '{0.__class__}'
async def orchestrate(ctx, args):
    leaked = "{0.__class__.__mro__}".format(args)
    return {"leaked": leaked}
