# expect: R08
# technique: exec of a string
async def orchestrate(ctx, args):
    exec("import os")
    return {}
