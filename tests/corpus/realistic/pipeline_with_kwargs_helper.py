# pipeline stages that call a shared helper with keyword arguments
# args: {"products": ["a leather wallet", "a canvas tote"]}
async def generate(ctx, prompt, size="1024x1024", seed=0):
    image = await ctx.run("image.generate", {"prompt": prompt, "size": size, "seed": seed})
    return image["artifact"]


async def orchestrate(ctx, args):
    async def hero(product):
        return {"product": product, "hero": await generate(ctx, f"hero shot of {product}", size="1536x1024")}

    async def detail(item):
        ref = await generate(ctx, f"macro detail of {item['product']}", seed=3)
        return {**item, "detail": ref}

    return {"items": await ctx.pipeline(args["products"][:3], hero, detail)}
