# expect: R04
# technique: set.pop() (an allowlisted method name) returns whichever element hashing puts first
async def orchestrate(ctx, args):
    style = {"noir", "neon", "pastel"}.pop()
    image = await ctx.run("image.generate", {"prompt": f"a city in {style}", "size": "1024x1024"})
    return {"image": image}
