# expect: R09
# technique: define a class inside orchestrate
async def orchestrate(ctx, args):
    class Holder:
        value = 1
    return {"v": 1}
