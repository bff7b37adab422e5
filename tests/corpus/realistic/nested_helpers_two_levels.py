# two levels of nested helpers, each closing over ctx and args
# args: {"theme": "a robot garden", "rooms": ["greenhouse", "workshop"]}
async def orchestrate(ctx, args):
    theme = args["theme"]

    async def room_set(room):
        async def view(angle):
            image = await ctx.run("image.generate", {"prompt": f"{theme}: {room}, {angle}", "size": "1024x1024"})
            return image["artifact"]

        views = await ctx.parallel([view("wide"), view("detail")])
        return {"room": room, "views": views}

    sets = await ctx.parallel([room_set(r) for r in args["rooms"][:3]])
    return {"sets": sets}
