# build prompts with a sync helper and f-strings, then render them
# args: {"subject": "a red fox", "moods": ["calm", "playful", "mysterious"]}
STYLE = "children's book illustration"


def build_prompt(subject, mood, style=STYLE):
    return f"{style} of {subject}, {mood} mood, soft colours"


async def orchestrate(ctx, args):
    moods = args["moods"][:3]
    prompts = [build_prompt(args["subject"], m) for m in moods]
    images = await ctx.parallel([
        ctx.run("image.generate", {"prompt": p, "size": "1024x1536"}) for p in prompts
    ])
    return {"pages": [{"mood": m, "image": img["artifact"]} for m, img in zip(moods, images)]}
