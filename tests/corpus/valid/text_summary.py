# summaries of a bounded list of notes joined into one report
# args: {"notes": ["shot 1 too dark", "shot 2 fine", "shot 3 needs more contrast"]}
async def orchestrate(ctx, args):
    notes = args["notes"][:10]
    bullet_list = "\n".join([f"- {note}" for note in notes])
    summary = await ctx.run("text.generate",
                            {"prompt": f"Summarize these review notes for a producer:\n{bullet_list}",
                             "max_tokens": 120})
    return {"summary": summary["text"], "count": len(notes)}
