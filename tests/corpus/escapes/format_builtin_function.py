# expect: R08
# technique: the format() builtin calls __format__ on an arbitrary object
async def orchestrate(ctx, args):
    return {"text": format(ctx, "")}
