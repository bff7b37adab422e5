# expect: R08
# technique: mathematical bold 𝐞𝐱𝐞𝐜, normalized to exec
async def orchestrate(ctx, args):
    𝐞𝐱𝐞𝐜("x = 1")
    return {}
