# prompts built from a module-level template with replace
# args: {"animals": ["otter", "heron", "beaver"]}
TEMPLATE = "field guide illustration of a {animal}, white background"


async def orchestrate(ctx, args):
    prompts = [TEMPLATE.replace("{animal}", a) for a in args["animals"][:5]]
    images = await ctx.parallel([ctx.run("image.generate", {"prompt": p, "size": "1024x1024"}) for p in prompts])
    return {"guide": dict(zip(args["animals"][:5], [i["artifact"] for i in images]))}
