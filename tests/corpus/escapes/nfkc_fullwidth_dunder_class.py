# expect: R07
# technique: fullwidth letters inside a dunder attribute: __ｃｌａｓｓ__
async def orchestrate(ctx, args):
    return {"c": str(args.__ｃｌａｓｓ__)}
