# expect: R07
# technique: f_builtins of a generator frame returns the builtins dict
async def orchestrate(ctx, args):
    gen = (x for x in [1])
    builtins_dict = gen.gi_frame.f_builtins
    return {"n": len(builtins_dict)}
