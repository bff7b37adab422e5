# expect: R06
# technique: an import hidden in a try block
async def orchestrate(ctx, args):
    try:
        import json
    except Exception:
        return {}
    return {"j": json.dumps(args)}
