# expect: R07
# technique: format a template string that arrives in args (attribute walk decided at run time)
async def orchestrate(ctx, args):
    template = args["template"]
    return {"leaked": template.format(ctx)}
