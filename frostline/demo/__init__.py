"""The `frostline demo` scenario and its shipped inputs (script, recorded model)."""
