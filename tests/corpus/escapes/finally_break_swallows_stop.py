# expect: R09
# technique: break inside finally discards the in-flight exception and keeps looping work alive
async def orchestrate(ctx, args):
    images = []
    for prompt in args["prompts"][:3]:
        try:
            images.append(await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"}))
        finally:
            break
    return {"images": images}
