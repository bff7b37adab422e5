# expect: R07
# technique: gi_frame.f_back.f_globals of a generator expression
async def orchestrate(ctx, args):
    gen = (x for x in [1, 2, 3])
    frame = gen.gi_frame
    return {"g": len(frame.f_back.f_globals)}
