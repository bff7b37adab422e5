# race two phrasings of a headline request
# args: {"product": "noise-cancelling headphones"}
async def orchestrate(ctx, args):
    async def ask(prompt):
        text = await ctx.run("text.generate", {"prompt": prompt, "max_tokens": 20})
        return text["text"]

    product = args["product"]
    headline = await ctx.race([
        ask(f"A punchy headline for {product}"),
        ask(f"A calm, premium headline for {product}"),
    ])
    return {"headline": headline}
