"""Test doubles for frostline's own tests and benchmarks (after Temporal's `temporalio.testing`).

- `FaultyStore` (frostline.testing.faulty) wraps a real store and fails its reads and/or writes.
- `Delegating` (frostline.testing.providers) wraps a provider; a subclass counts, delays or
  fails its calls.
- `InProcessRunner` (frostline.testing.runners) runs a script in the host's event loop, with
  no isolation at all.

No product module imports this package (the layer contract in pyproject.toml puts it on top,
and tests/test_architecture.py checks it); tests and benchmarks do.
"""

from frostline.testing.faulty import FaultyStore
from frostline.testing.providers import Delegating
from frostline.testing.runners import DirectTransport, InProcessRunner

__all__ = ["Delegating", "DirectTransport", "FaultyStore", "InProcessRunner"]
