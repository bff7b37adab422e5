"""The `frostline demo` scenario and its shipped inputs (script, scripted model replies)."""
