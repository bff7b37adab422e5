"""The `frostline demo` scenario and its shipped inputs (script, scripted model replies)."""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
