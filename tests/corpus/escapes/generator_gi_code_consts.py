# expect: R07
# technique: read co_consts of a generator's code object through gi_code
async def orchestrate(ctx, args):
    gen = (x for x in [1, 2])
    return {"consts": str(gen.gi_code.co_consts)}
