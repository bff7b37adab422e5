# expect: R11
# technique: bounded nested loops whose product of image calls (40 x 30 = 1200 calls, $24) exceeds the envelope's budget ($10, 1000 calls)
async def orchestrate(ctx, args):
    images = []
    for shot in args["shots"][:40]:
        for variant in range(30):
            image = await ctx.run("image.generate",
                                  {"prompt": f"{shot} {variant}", "size": "1024x1024", "seed": variant})
            images.append(image["artifact"])
    return {"images": images}
