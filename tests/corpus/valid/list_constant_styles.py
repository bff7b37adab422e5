# a module-level list literal of styles, fanned out
# args: {"subject": "a vintage motorcycle"}
STYLES = ["watercolor", "charcoal sketch", "neon poster"]


async def orchestrate(ctx, args):
    async def styled(style):
        image = await ctx.run("image.generate", {"prompt": f"{args['subject']}, {style}", "size": "1024x1024"})
        return {"style": style, "image": image["artifact"]}

    return await ctx.parallel([styled(style) for style in STYLES])
