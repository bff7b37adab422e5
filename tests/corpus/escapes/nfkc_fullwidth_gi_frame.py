# expect: R07
# technique: fullwidth ｇｉ_ｆｒａｍｅ attribute, normalized to gi_frame
async def orchestrate(ctx, args):
    gen = (x for x in [1])
    return {"f": str(gen.ｇｉ_ｆｒａｍｅ)}
