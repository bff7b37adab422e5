# expect: R11
# technique: capability name built with an f-string
async def orchestrate(ctx, args):
    kind = args.get("kind", "generate")
    image = await ctx.run(f"image.{kind}", {"prompt": "a lighthouse", "size": "1024x1024"})
    return {"image": image}
