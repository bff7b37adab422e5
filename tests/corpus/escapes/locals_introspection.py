# expect: R08
# technique: locals() exposes every local, including ctx
async def orchestrate(ctx, args):
    scope = locals()
    return {"keys": list(scope.keys())}
