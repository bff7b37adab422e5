# expect: R07
# technique: walk from an empty tuple to object.__subclasses__() via __class__ and __mro__
async def orchestrate(ctx, args):
    classes = ().__class__.__mro__[1].__subclasses__()
    return {"n": len(classes)}
