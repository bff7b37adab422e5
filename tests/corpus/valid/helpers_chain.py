# helpers calling helpers, acyclic: orchestrate -> produce -> (render, check)
# args: {"prompts": ["a teal armchair", "a walnut desk"]}
async def render(ctx, prompt):
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    return image["artifact"]


async def check(ctx, ref):
    review = await ctx.run("review.visual", {"image": ref, "criteria": "catalog quality"})
    return review["verdict"] == "pass"


async def produce(ctx, prompt):
    ref = await render(ctx, prompt)
    ok = await check(ctx, ref)
    return {"image": ref, "ok": ok}


async def orchestrate(ctx, args):
    out = []
    for prompt in args["prompts"][:2]:
        out.append(await produce(ctx, prompt))
    return {"items": out}
