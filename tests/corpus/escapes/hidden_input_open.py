# expect: R08
# technique: read a file with open()
async def orchestrate(ctx, args):
    with open("/etc/hostname") as fh:
        name = fh.read()
    return {"name": name}
