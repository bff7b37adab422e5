"""Fixtures for the sandbox acceptance suite: every test runs real bubblewrap.

The suite is skipped as a whole only when bubblewrap is not installed at all; if it is
installed but cannot build the profile, the tests fail (the runner must never silently
degrade, and neither may its tests).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator

import pytest

from frostline.runtime.limits import ResourceLimits
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_probe import verify_profile


@pytest.fixture(scope="session")
def profile() -> SandboxProfile:
    """A verified profile with small limits so that limit tests finish quickly."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    p = SandboxProfile(
        limits=ResourceLimits(
            cpu_seconds=5,
            address_space_bytes=512 << 20,
            processes=32,
            open_files=64,
            file_size_bytes=1 << 20,
        ),
        wall_seconds=20,
        output_bytes=64 << 10,
    )
    verify_profile(p)
    return p


def _marker_processes(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture
def marker_processes() -> Callable[[str], list[int]]:
    """Host pids whose command line contains a marker (to prove nothing survived)."""
    return _marker_processes


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A provider-credential-looking secret placed in the host's environment."""
    secret = "sk-frostline-canary-" + os.urandom(8).hex()
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("FROSTLINE_PROVIDER_TOKEN", secret)
    yield secret
