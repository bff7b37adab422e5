# prompt assembly with f-strings and string methods in a sync helper
# args: {"subject": "  Vintage Typewriter ", "mood": "warm", "details": ["brass keys", "paper", "desk lamp"]}
def build_prompt(subject, mood, details):
    clean = subject.strip().lower()
    extras = ", ".join(details)
    return f"{clean.title()} in a {mood.lower()} mood, with {extras}; photographic, 35mm"


async def orchestrate(ctx, args):
    prompt = build_prompt(args["subject"], args.get("mood", "calm"), args["details"][:5])
    image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
    return {"prompt": prompt, "image": image["artifact"]}
