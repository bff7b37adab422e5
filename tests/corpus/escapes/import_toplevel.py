# expect: R06
# technique: plain import at module level
import subprocess


async def orchestrate(ctx, args):
    return {}
