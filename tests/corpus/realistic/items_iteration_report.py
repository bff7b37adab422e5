# render a set of named scenes and print a report over the dict items
# args: {"scenes": {"opening": "a sunrise over fields", "middle": "a busy market", "closing": "lanterns at dusk"}}
async def orchestrate(ctx, args):
    scenes = dict(list(args["scenes"].items())[:4])
    rendered = {}
    for name, prompt in scenes.items():
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1536x1024"})
        rendered[name] = image["artifact"]
    lines = [f"{name}: {ref[:19]}" for name, ref in sorted(rendered.items())]
    return {"rendered": rendered, "report": "\n".join(lines)}
