# a nested helper whose defaults name module constants
# args: {"subjects": ["a fox", "a hare", "a badger"]}
STYLE = "woodcut"
SIZE = "512x512"


async def orchestrate(ctx, args):
    async def portrait(subject, style=STYLE, size=SIZE):
        image = await ctx.run("image.generate", {"prompt": f"{style} portrait of {subject}", "size": size})
        return image["artifact"]

    portraits = await ctx.parallel([portrait(s) for s in args["subjects"][:4]])
    cover = await portrait("a woodland gathering", size="1024x1536")
    return {"portraits": portraits, "cover": cover}
