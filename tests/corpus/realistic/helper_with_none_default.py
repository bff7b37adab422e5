# a helper with a None default that picks a style when none is given
# args: {"subjects": ["a lighthouse", "a sailboat"], "style": null}
DEFAULT_STYLE = "linocut print"


async def draw(ctx, subject, style=None):
    chosen = style or DEFAULT_STYLE
    image = await ctx.run("image.generate", {"prompt": f"{chosen} of {subject}", "size": "1024x1024"})
    return {"subject": subject, "style": chosen, "image": image["artifact"]}


async def orchestrate(ctx, args):
    style = args.get("style")
    return {"drawings": await ctx.parallel([draw(ctx, s, style) for s in args["subjects"][:4]])}
