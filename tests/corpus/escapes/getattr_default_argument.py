# expect: R08
# technique: smuggle getattr in as a default argument value
def peek(obj, name, reader=getattr):
    return reader(obj, name)


async def orchestrate(ctx, args):
    return {"b": str(peek(ctx, "_broker"))}
