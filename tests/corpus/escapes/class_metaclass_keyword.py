# expect: R09
# technique: a class whose metaclass runs code at definition time
async def orchestrate(ctx, args):
    class Meta(type):
        pass

    class Thing(metaclass=Meta):
        pass
    return {}
