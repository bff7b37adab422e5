# expect: R03
# technique: a comprehension over unsliced input
async def orchestrate(ctx, args):
    prompts = [p.strip() for p in args["prompts"]]
    return {"prompts": prompts}
