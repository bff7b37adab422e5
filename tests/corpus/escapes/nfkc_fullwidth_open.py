# expect: R08
# technique: fullwidth ｏｐｅｎ, normalized to open
async def orchestrate(ctx, args):
    handle = ｏｐｅｎ("/etc/hostname")
    return {"h": str(handle)}
