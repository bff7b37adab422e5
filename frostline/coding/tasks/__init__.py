"""Building the coding workflow's task sets from real repositories: fetch, pin, probe, mutate,
split."""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
