# expect: R08
# technique: fullwidth ｇｅｔａｔｔｒ, normalized to getattr
async def orchestrate(ctx, args):
    broker = ｇｅｔａｔｔｒ(ctx, "_broker")
    return {"b": str(broker)}
