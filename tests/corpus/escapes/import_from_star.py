# expect: R06
# technique: from os import * at module level
from os import *


async def orchestrate(ctx, args):
    return {}
