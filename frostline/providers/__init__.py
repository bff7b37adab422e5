"""What answers a capability: the providers the broker calls.

`local` answers every built-in capability offline with real artifacts (the zero-configuration
default); `http` answers image and text capabilities over an OpenAI-compatible endpoint. The
protocol they implement lives below, in frostline.capabilities.provider.
"""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
