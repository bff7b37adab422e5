# caught-by: cpu
# technique: max(range(args["n"])): the iteration count comes from the input, inside a builtin
# note: no loop syntax, so no R03; args are size-capped but a number is small to send.
async def orchestrate(ctx, args):
    top = max(range(args["n"]))
    return {"top": top}
