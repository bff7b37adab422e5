# generate images and alt text, validating the alt text length with a helper
# args: {"prompts": ["a guide dog at a crossing", "a ramp into a library"]}
MAX_ALT = 125


def clamp_text(text, limit=MAX_ALT):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def orchestrate(ctx, args):
    out = []
    for prompt in args["prompts"][:4]:
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        alt = await ctx.run("text.generate", {"prompt": f"Alt text: {prompt}", "max_tokens": 40})
        out.append({"image": image["artifact"], "alt": clamp_text(alt["text"])})
    return {"images": out}
