# expect: R02
# technique: send a raw RPC frame through a private ctx attribute
async def orchestrate(ctx, args):
    ctx._rpc.send({"capability": "image.generate"})
    return {}
