# expect: R04
# technique: str() of a set puts hash-order-dependent text into a payload (no iteration syntax)
async def orchestrate(ctx, args):
    styles = "moods: " + str({"noir", "neon", "pastel"})
    image = await ctx.run("image.generate", {"prompt": styles, "size": "1024x1024"})
    return {"image": image}
