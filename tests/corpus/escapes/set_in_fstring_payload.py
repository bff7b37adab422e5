# expect: R04
# technique: an f-string formats a set, so the prompt's word order follows string hashing
async def orchestrate(ctx, args):
    prompt = f"a poster in these styles: { {'noir', 'neon', 'pastel'} }"
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    return {"image": image}
