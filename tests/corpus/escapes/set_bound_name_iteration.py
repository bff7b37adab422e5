# expect: R04
# technique: bind a set literal to a name, then iterate the name
async def orchestrate(ctx, args):
    styles = {"noir", "pastel", "neon"}
    out = []
    for style in styles:
        out.append(style)
    return {"out": out}
