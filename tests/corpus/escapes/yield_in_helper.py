# expect: R09
# technique: a generator helper: its frame survives between steps
def shots():
    yield "one"
    yield "two"


async def orchestrate(ctx, args):
    return {"first": "x"}
