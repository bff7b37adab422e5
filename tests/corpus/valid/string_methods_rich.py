# a tour of allowed string methods while assembling prompts
# args: {"title": "the last ferry home", "tags": "dusk, harbour , rain ,crowd"}
async def orchestrate(ctx, args):
    title = args["title"].title()
    tags = [t.strip().lower() for t in args["tags"].split(",")[:6]]
    if title.startswith("The "):
        title = title.replace("The ", "", 1)
    lines = f"{title}\n{' / '.join(tags)}".splitlines()
    prompt = lines[0].upper() + " -- " + lines[1].capitalize()
    hits = prompt.count("/")
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
    return {"prompt": prompt, "separators": hits, "image": image["artifact"]}
