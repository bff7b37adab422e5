# generate in parallel, then review every image in parallel
# args: {"prompts": ["a snowy owl", "a red panda", "a sea turtle", "a hummingbird"]}
async def orchestrate(ctx, args):
    async def gen(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        return image["artifact"]

    async def review(ref):
        result = await ctx.run("review.visual", {"image": ref})
        return result["verdict"]

    refs = await ctx.parallel([gen(p) for p in args["prompts"][:4]])
    verdicts = await ctx.parallel([review(ref) for ref in refs[:4]])
    passed = len([v for v in verdicts[:4] if v == "pass"])
    return {"images": refs, "verdicts": verdicts, "passed": passed}
