"""Executing one attempt: the child process or bubblewrap sandbox that runs the script, the
broker that answers its `ctx.run` calls under the contract (admission, dispatch, settlement,
audit), recovery of an interrupted attempt, and the dry replay behind the gate."""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
