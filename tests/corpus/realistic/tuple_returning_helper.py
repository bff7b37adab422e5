# a helper returns a (ref, score) tuple; the caller unpacks it
# args: {"prompts": ["a mossy stone", "a river pebble"]}
async def render_and_score(ctx, prompt):
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "512x512"})
    review = await ctx.run("review.visual", {"image": image["artifact"]})
    return image["artifact"], review["score"]


async def orchestrate(ctx, args):
    results = []
    for prompt in args["prompts"][:3]:
        ref, score = await render_and_score(ctx, prompt)
        results.append({"prompt": prompt, "ref": ref, "score": score})
    return {"results": results}
