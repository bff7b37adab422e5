# expect: R03
# technique: range(len(...)) of an unbounded list
async def orchestrate(ctx, args):
    total = 0
    for i in range(len(args["items"])):
        total = total + i
    return {"total": total}
