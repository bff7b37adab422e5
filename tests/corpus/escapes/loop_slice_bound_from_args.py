# expect: R03
# technique: a slice whose bound comes from args
async def orchestrate(ctx, args):
    out = []
    for item in args["items"][: args["limit"]]:
        out.append(item)
    return {"out": out}
