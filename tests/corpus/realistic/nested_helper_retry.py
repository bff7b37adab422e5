# nested helper that retries a render with new seeds until the review passes
# args: {"subjects": ["a marble bust", "a copper kettle"]}
MAX_TRIES = 3


async def orchestrate(ctx, args):
    async def render_until_pass(subject):
        last = None
        for attempt in range(MAX_TRIES):
            image = await ctx.run("image.generate", {
                "prompt": f"museum catalogue photo of {subject}",
                "size": "1024x1024",
                "seed": attempt * 7 + 1,
            })
            last = image["artifact"]
            review = await ctx.run("review.visual", {"image": last})
            if review["verdict"] == "pass":
                return {"subject": subject, "image": last, "attempts": attempt + 1}
        return {"subject": subject, "image": last, "attempts": MAX_TRIES}

    results = await ctx.parallel([render_until_pass(s) for s in args["subjects"][:4]])
    return {"results": results}
