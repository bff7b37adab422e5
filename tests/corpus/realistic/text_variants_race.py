# race two tagline prompts and keep the first one back
# args: {"brand": "Lumen Lamps"}
async def orchestrate(ctx, args):
    brand = args["brand"]
    prompts = [f"A witty tagline for {brand}", f"A calm, premium tagline for {brand}"]
    winner = await ctx.race([ctx.run("text.generate", {"prompt": p, "max_tokens": 16}) for p in prompts])
    return {"tagline": winner["text"]}
