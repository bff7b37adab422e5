# expect: R03
# technique: a bounded list literal that the loop appends to (grows forever)
async def orchestrate(ctx, args):
    queue = ["seed"]
    for item in queue:
        queue.append(item)
    return {"n": len(queue)}
