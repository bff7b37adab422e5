# expect: R02|R12
# technique: a synchronous ctx.run whose coroutine is used as if it were the result
async def orchestrate(ctx, args):
    result = ctx.run("text.generate", {"prompt": "write a tagline"})
    return {"text": result}
