"""Acceptance: every escape in the checker's corpus, executed with the checker skipped.

The checker is the first line; this suite assumes it failed. Each script of
``tests/corpus/escapes`` and ``tests/corpus/runtime_only`` runs in the real sandbox in a child
whose builtins are the interpreter's full set — what a script would have if it also escaped the child's own
restrictions (``open``, ``__import__``, ``eval`` all work there), and, as the slow campaign
(``FROSTLINE_SLOW=1``), in the ordinary child with restricted builtins. Either way it must stay
contained: no effect outside the sandbox (a host canary untouched, no file appears on the
host), no secret from the host's environment in the outcome, the logs or the store, and
bounded time and memory.
"""

from __future__ import annotations

import json
import os
import resource
import textwrap
from pathlib import Path
from typing import Any

import pytest

from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_runner import SandboxRunner

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SCRIPTS = sorted((CORPUS / "escapes").glob("*.py")) + sorted(
    (CORPUS / "runtime_only").glob("*.py")
)

# Arguments every corpus script may index; values chosen to make the escapes try hardest.
ARGS: dict[str, Any] = {
    "n": 3, "items": ["a", "b", "c"], "prompts": ["p1", "p2"], "shots": [{"prompt": "s"}],
    "jobs": [1, 2], "tags": ["t"], "copies": 2, "limit": 3, "left": [1], "right": [2],
    "capability": "echo", "expression": "__import__('os').environ", "prompt": "x",
    "template": "{0.__class__.__init__.__globals__}", "stream": "s", "lock": "l",
    "kind": "k", "once": True,
}

# The child with the interpreter's full builtins instead of the allowlist.
UNRESTRICTED_CHILD = (
    "import builtins, sys\n"
    "import frostline.runtime.child as child\n"
    "child.safe_builtins = lambda: dict(vars(builtins))\n"
    "sys.exit(child.main(sys.argv[1:]))\n"
)


class UnrestrictedChildRunner(SandboxRunner):
    def child_argv(self, read_fd: int, write_fd: int) -> list[str]:
        return ["-c", UNRESTRICTED_CHILD, str(read_fd), str(write_fd)]


def _envelope(source: str) -> dict[str, Any] | None:
    for line in source.splitlines():
        if line.startswith("# envelope:"):
            return dict(json.loads(line.split(":", 1)[1]))
    return None


def _host_files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def corpus_profile(profile: SandboxProfile) -> SandboxProfile:
    from dataclasses import replace

    return replace(profile, wall_seconds=5, limits=replace(profile.limits, cpu_seconds=1))


# The unrestricted child is the stronger test and runs by default; the ordinary child's run of
# the whole corpus is a long campaign.
MODES = [
    "unrestricted",
    pytest.param("restricted", marks=[
        pytest.mark.slow,
        pytest.mark.skipif(not os.environ.get("FROSTLINE_SLOW"),
                           reason="long campaign; set FROSTLINE_SLOW=1 to run it"),
    ]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{p.parent.name}/{p.stem}" for p in SCRIPTS])
def test_escape_is_contained(script, mode, corpus_profile, sqlite_store, tmp_path,
                             secret_env, caplog):
    source = script.read_text()
    host = tmp_path / "host"  # stands for the host's files; the store lives beside it
    host.mkdir()
    canary = host / "canary.txt"
    canary.write_text("untouched")
    before = _host_files(host)

    runner_cls = SandboxRunner if mode == "restricted" else UnrestrictedChildRunner
    peak_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    out = execute(sqlite_store, "r", textwrap.dedent(source), args=ARGS,
                  envelope=_envelope(source),
                  providers=LocalProviders(log_path=tmp_path / "provider.jsonl"),
                  runner=runner_cls(corpus_profile), skip_checker=True)

    # bounded time: the attempt ended (a timeout is a contained ending too)
    assert out.status in {"succeeded", "failed", "diverged", "rejected"}, out.status
    # no secret out
    shown = json.dumps(out.to_dict(), default=str) + out.logs + caplog.text
    assert secret_env not in shown
    sqlite_store.close()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret_env.encode() not in path.read_bytes(), path
    # no effect outside the sandbox
    assert canary.read_text() == "untouched"
    assert _host_files(host) == before
    # bounded memory: no process of this test's sandbox grew past the address-space limit.
    # ru_maxrss of the children is a maximum over every child this process waited for, other
    # tests' included (a forked test worker can be far larger), so only a new maximum is ours.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if peak > peak_before:
        assert peak <= corpus_profile.limits.address_space_bytes


def test_unrestricted_child_really_has_full_builtins(corpus_profile, sqlite_store, tmp_path):
    """Guards the suite above: in the unrestricted mode the escapes do get `open` and `import`."""
    src = textwrap.dedent(
        """
        async def orchestrate(ctx, args):
            import os
            with open("/proc/self/status") as fh:
                seccomp = [l.split()[1] for l in fh.read().splitlines() if l.startswith("Seccomp")]
            return {"uid": os.getuid(), "seccomp": seccomp[0], "env": sorted(os.environ)}
        """
    )
    out = execute(sqlite_store, "u", src, providers=LocalProviders(),
                  runner=UnrestrictedChildRunner(corpus_profile), skip_checker=True)
    assert out.status == "succeeded", out.error
    assert out.result["uid"] == 65534 and out.result["seccomp"] == "2"
    assert "OPENAI_API_KEY" not in out.result["env"]


def test_the_corpus_is_there():
    assert len(SCRIPTS) > 100
