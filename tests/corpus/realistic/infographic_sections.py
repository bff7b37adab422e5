# an infographic: a literal list of section dicts, one panel each
# args: {"topic": "how rainwater harvesting works"}
SECTIONS = [
    {"name": "collect", "hint": "roof and gutters"},
    {"name": "filter", "hint": "mesh and first-flush diverter"},
    {"name": "store", "hint": "a tank with a tap"},
]


async def orchestrate(ctx, args):
    panels = []
    for section in SECTIONS:
        panel = await ctx.run("image.generate", {"prompt": f"infographic panel about {args['topic']}: {section['name']} ({section['hint']})", "size": "1024x1536"})
        panels.append({"section": section["name"], "panel": panel["artifact"]})
    return {"panels": panels}
