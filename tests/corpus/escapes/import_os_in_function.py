# expect: R06
# technique: plain import inside orchestrate
async def orchestrate(ctx, args):
    import os
    return {"cwd": os.getcwd()}
