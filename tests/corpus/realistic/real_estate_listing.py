# a property listing: room photos, a description, alt text for each photo
# args: {"address": "12 Orchard Lane", "rooms": ["kitchen", "living room", "garden"]}
async def orchestrate(ctx, args):
    rooms = args["rooms"][:5]
    photos = await ctx.parallel([
        ctx.run("image.generate", {"prompt": f"bright real estate photo of the {room} at {args['address']}", "size": "1536x1024"})
        for room in rooms
    ])
    description = await ctx.run("text.generate", {"prompt": f"Listing description for {args['address']} with {', '.join(rooms)}", "max_tokens": 90})
    alt_texts = await ctx.parallel([
        ctx.run("text.generate", {"prompt": f"Alt text for a photo of the {room}", "max_tokens": 15}) for room in rooms
    ])
    gallery = [{"room": r, "photo": p["artifact"], "alt": a["text"]} for r, p, a in zip(rooms, photos, alt_texts)]
    return {"description": description["text"], "gallery": gallery}
