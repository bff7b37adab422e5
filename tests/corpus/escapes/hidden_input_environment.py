# expect: R06
# technique: read the environment (credentials) through os.environ
async def orchestrate(ctx, args):
    from os import environ
    return {"key": environ.get("OPENAI_API_KEY")}
