# a comic strip: numbered panels from a list of beats
# args: {"beats": ["cat sees a box", "cat jumps in", "box is too small", "cat looks proud"]}
async def orchestrate(ctx, args):
    panels = []
    for number, beat in enumerate(args["beats"][:6], start=1):
        image = await ctx.run("image.generate", {
            "prompt": f"comic panel {number}: {beat}, ink and flat colour",
            "size": "1024x1024",
        })
        panels.append({"panel": number, "beat": beat, "image": image["artifact"]})
    return {"panels": panels}
