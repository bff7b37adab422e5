# expect: R08
# technique: compile() a code object
async def orchestrate(ctx, args):
    code = compile("1 + 1", "<x>", "eval")
    return {"c": str(code)}
