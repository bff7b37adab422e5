# many intermediate variables, the way a step-by-step script reads
# args: {"city": "Lisbon", "time_of_day": "golden hour"}
async def orchestrate(ctx, args):
    city = args["city"]
    time_of_day = args.get("time_of_day", "noon")
    subject = f"the rooftops of {city}"
    lighting = f"{time_of_day} light"
    prompt = f"{subject}, {lighting}, 35mm film look"
    size = "1536x1024"
    payload = {"prompt": prompt, "size": size}
    image = await ctx.run("image.generate", payload)
    artifact = image["artifact"]
    review = await ctx.run("review.visual", {"image": artifact, "criteria": lighting})
    verdict = review["verdict"]
    ok = verdict == "pass"
    result = {"image": artifact, "ok": ok, "prompt": prompt}
    return result
