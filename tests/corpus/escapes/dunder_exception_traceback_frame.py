# expect: R07
# technique: walk from a caught exception to a frame via __traceback__.tb_frame
async def orchestrate(ctx, args):
    try:
        1 / 0
    except Exception as exc:
        frame = exc.__traceback__.tb_frame
        return {"g": len(frame.f_globals)}
    return {}
