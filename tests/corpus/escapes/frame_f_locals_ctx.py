# expect: R07
# technique: f_locals of an outer frame to recover hidden locals
async def orchestrate(ctx, args):
    gen = (x for x in [1])
    outer = gen.gi_frame.f_back.f_locals
    return {"keys": list(outer.keys())[:3]}
