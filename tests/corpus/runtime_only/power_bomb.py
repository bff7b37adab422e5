# caught-by: cpu
# technique: integer exponentiation whose result has ~10^8 digits: seconds of CPU, no loop at all
# note: arithmetic cost is outside every static rule; the CPU rlimit and the wall-clock timeout stop it.
async def orchestrate(ctx, args):
    big = 10 ** 10 ** 8
    return {"odd": big % 2}
