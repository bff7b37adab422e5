# a character sheet: the same character in several poses, then a review of each
# args: {"character": "a clockwork owl with brass feathers"}
POSES = ["standing", "flying", "perched", "sleeping"]


async def orchestrate(ctx, args):
    async def pose(name):
        image = await ctx.run("image.generate", {"prompt": f"character sheet, {args['character']}, {name} pose", "size": "1024x1024", "seed": 7})
        review = await ctx.run("review.visual", {"image": image["artifact"], "criteria": "consistent character"})
        return {"pose": name, "image": image["artifact"], "ok": review["verdict"] == "pass"}

    sheet = await ctx.parallel([pose(p) for p in POSES])
    problems = [s["pose"] for s in sheet if not s["ok"]]
    return {"sheet": sheet, "problems": problems}
