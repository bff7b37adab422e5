# expect: R01
# technique: a synchronous orchestrate
def orchestrate(ctx, args):
    return {}
