# a sync helper formats a list of results it receives
# args: {"prompts": ["a kite", "a yo-yo", "a spinning top"]}
def format_rows(results):
    return [f"{r['prompt']} -> {r['verdict']}" for r in results]


async def orchestrate(ctx, args):
    results = []
    for prompt in args["prompts"][:3]:
        image = await ctx.run("image.generate", {"prompt": f"toy photo of {prompt}", "size": "512x512"})
        review = await ctx.run("review.visual", {"image": image["artifact"]})
        results.append({"prompt": prompt, "verdict": review["verdict"]})
    return {"rows": format_rows(results)}
