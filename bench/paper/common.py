"""The harness every paper study shares: a real store, the real runtime, counted executions.

Each study runs scripts through `frostline.runtime.execute.execute` on a fresh SQLite store with
the offline `LocalProviders`, whose JSON-lines provider log is the independent count of real
executions (a rejected request is logged too: it is a paid attempt). `Lab` bundles the three so
that a study reads as the paper's protocol: run the original, run the repair under the same run
id, and compare with a full rerun of the repair under a fresh run id.
"""

from __future__ import annotations

import tempfile
import textwrap
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frostline.providers.local import LocalProviders
from frostline.providers.provider_log import ProviderLog
from frostline.runtime.execute import AttemptOutcome, execute
from frostline.store import Store, open_store
from frostline.testing import InProcessRunner


class Lab:
    """A fresh SQLite store, local providers with a provider log, and the in-process runner.

    Use as a context manager; the directory holding the store, artifacts and log is removed on
    exit unless `root` was given.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self._tmp = None if root is not None else tempfile.TemporaryDirectory(prefix="paper-")
        self.root = Path(root if root is not None else self._tmp.name)  # type: ignore[union-attr]
        self.root.mkdir(parents=True, exist_ok=True)
        self.log_path = self.root / "provider.jsonl"
        self.store: Store = open_store(f"sqlite:///{self.root / 'frostline.db'}")
        self.providers = LocalProviders(log_path=self.log_path)
        self.runner = InProcessRunner()

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def run(self, run_id: str, source: str, *, args: Any = None,
            envelope: Mapping[str, Any] | None = None) -> AttemptOutcome:
        """One attempt of `source` under `run_id` through the production `execute`, under
        the paper's callsite gate (`relocation = "stop"`) unless `envelope` says otherwise."""
        return execute(self.store, run_id, textwrap.dedent(source), args=args,
                       envelope={"relocation": "stop", **(envelope or {})},
                       providers=self.providers, runner=self.runner)

    def fresh_id(self, prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex[:8]}"

    def log(self) -> list[dict[str, Any]]:
        """Every real execution so far, accepted or rejected, from the provider log."""
        return ProviderLog(self.log_path).read() if self.log_path.exists() else []

    def logged(self) -> tuple[int, int]:
        """(attempts, successes) the providers recorded so far."""
        entries = self.log()
        return len(entries), sum(1 for e in entries if e.get("ok"))


@dataclass(frozen=True)
class Counted:
    """What an attempt cost by the provider log, next to what the runtime reported."""

    outcome: AttemptOutcome
    attempts: int
    successes: int

    @property
    def status(self) -> str:
        return self.outcome.status


def counted(lab: Lab, run_id: str, source: str, **kw: Any) -> Counted:
    """Run an attempt and count, from the provider log, what it really executed."""
    before_a, before_s = lab.logged()
    out = lab.run(run_id, source, **kw)
    after_a, after_s = lab.logged()
    return Counted(out, after_a - before_a, after_s - before_s)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
    """A plain fixed-width table (the studies print these; docs quote them)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [title] if title else []
    for n, r in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
