# a slide deck: titles from text, a background per slide, numbered with zfill
# args: {"talk": "an introduction to tide pools", "slides": 4}
MAX_SLIDES = 6


async def orchestrate(ctx, args):
    n = max(1, min(args.get("slides", 3), MAX_SLIDES))
    outline = await ctx.run("text.generate", {"prompt": f"{n} slide titles for a talk on {args['talk']}", "max_tokens": 50})
    words = outline["text"].split()
    slides = []
    for i in range(n):
        title = " ".join(words[i * 4:(i + 1) * 4]) or f"Slide {i + 1}"
        bg = await ctx.run("image.generate", {"prompt": f"subtle slide background, {title}", "size": "1536x1024"})
        slides.append({"id": str(i + 1).zfill(2), "title": title.title(), "background": bg["artifact"]})
    return {"slides": slides}
