# expect: R07 R08
# technique: __import__('os') as a call
async def orchestrate(ctx, args):
    os_module = __import__("os")
    return {"m": str(os_module)}
