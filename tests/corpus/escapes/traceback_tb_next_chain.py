# expect: R07
# technique: walk tb_next / tb_frame from sys-free traceback objects
async def orchestrate(ctx, args):
    try:
        {}["missing"]
    except Exception as exc:
        tb = exc.__traceback__
        return {"line": tb.tb_lineno, "next": str(tb.tb_next)}
    return {}
