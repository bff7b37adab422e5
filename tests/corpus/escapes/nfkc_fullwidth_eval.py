# expect: R08
# technique: fullwidth ｅｖａｌ, which the parser normalizes to eval
async def orchestrate(ctx, args):
    return {"v": ｅｖａｌ("1 + 1")}
