# expect: R06
# technique: relative import of a sibling module
async def orchestrate(ctx, args):
    from . import secrets
    return {}
