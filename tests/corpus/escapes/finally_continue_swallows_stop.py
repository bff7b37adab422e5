# expect: R09
# technique: continue inside finally discards the in-flight exception, so the loop issues the next call
async def orchestrate(ctx, args):
    images = []
    for prompt in args["prompts"][:3]:
        try:
            images.append(await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"}))
        finally:
            continue
    return {"images": images}
