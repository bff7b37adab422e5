# expect: R07
# technique: a class pattern reads __traceback__ by keyword, with no attribute node in the AST
async def orchestrate(ctx, args):
    try:
        ratio = 1 / 0
    except Exception as exc:
        match exc:
            case Exception(__traceback__=tb):
                return {"tb": str(tb)}
    return {}
