# expect: R02
# technique: ctx captured as a default argument under another name
async def orchestrate(ctx, args):
    async def gen(prompt, engine=ctx):
        return await engine.run("text.generate", {"prompt": prompt})
    return await gen("x")
