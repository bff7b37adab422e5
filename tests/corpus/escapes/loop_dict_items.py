# expect: R03
# technique: iterate a dict of unknown size with .items()
async def orchestrate(ctx, args):
    out = {}
    for key, value in args.items():
        out[key] = value
    return out
