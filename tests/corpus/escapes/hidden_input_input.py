# expect: R08
# technique: read stdin with input()
async def orchestrate(ctx, args):
    answer = input("prompt? ")
    return {"answer": answer}
