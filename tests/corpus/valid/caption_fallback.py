# captions per image with a fixed fallback text when the text call fails
# args: {"prompts": ["a red telephone box", "a double-decker bus", "a foggy bridge"]}
FALLBACK = "Untitled"


async def caption_for(ctx, prompt):
    try:
        text = await ctx.run("text.generate", {"prompt": f"A five-word caption for {prompt}", "max_tokens": 12})
    except Exception:
        return FALLBACK
    return text["text"].strip() or FALLBACK


async def orchestrate(ctx, args):
    async def item(prompt):
        image = await ctx.run("image.generate", {"prompt": prompt, "size": "1024x1024"})
        caption = await caption_for(ctx, prompt)
        return {"image": image["artifact"], "caption": caption}

    return {"items": await ctx.parallel([item(p) for p in args["prompts"][:3]])}
