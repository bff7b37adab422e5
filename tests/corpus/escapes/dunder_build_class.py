# expect: R07 R08
# technique: call __build_class__ to create a class without a class statement
async def orchestrate(ctx, args):
    def body():
        return None
    cls = __build_class__(body, "Sneaky")
    return {"c": str(cls)}
