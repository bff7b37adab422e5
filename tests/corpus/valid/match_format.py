# a match statement chooses the output format
# args: {"format": "portrait", "prompt": "a jazz trio on stage"}
async def orchestrate(ctx, args):
    match args.get("format", "square"):
        case "portrait":
            size = "1024x1536"
        case "landscape":
            size = "1536x1024"
        case _:
            size = "1024x1024"
    image = await ctx.run("image.generate", {"prompt": args["prompt"], "size": size})
    return {"image": image["artifact"], "size": size}
