# expect: R07
# technique: str.format_map with an attribute-walking field
async def orchestrate(ctx, args):
    leaked = "{a.__class__.__init__.__globals__}".format_map({"a": args})
    return {"leaked": leaked}
