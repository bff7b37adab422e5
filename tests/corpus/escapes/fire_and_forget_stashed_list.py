# expect: R12
# technique: coroutines stashed in a list that is then dropped
async def orchestrate(ctx, args):
    async def gen(prompt):
        return await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    jobs = [gen(p) for p in args["prompts"][:4]]
    return {"queued": len(jobs)}
