# expect: R07 R08
# technique: fullwidth __ｉｍｐｏｒｔ__, normalized to __import__
async def orchestrate(ctx, args):
    mod = __ｉｍｐｏｒｔ__("os")
    return {"m": str(mod)}
