# caught-by: memory
# technique: a bounded comprehension whose every element is a megabyte string (500 MB in total)
# note: the comprehension is bounded (R03 is satisfied); the allocation is the sandbox's to stop.
async def orchestrate(ctx, args):
    table = {i: str(i) * 1000000 for i in range(500)}
    return {"n": len(table)}
