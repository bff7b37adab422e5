# expect: R07 R08
# technique: wall clock through __import__('time')
async def orchestrate(ctx, args):
    now = __import__("time").time()
    return {"now": now}
