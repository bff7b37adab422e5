# expect: R09
# technique: a lambda that wraps ctx.run (its callsite escapes the block structure)
async def orchestrate(ctx, args):
    draw = lambda prompt: ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    image = await draw("a lighthouse")
    return {"image": image}
