"""The embedded default, assembled: the configured providers (the local ones without a
configuration file), the default runner and plain-dict results. `frostline demo`, the HTTP
service and `frostline mcp` build on these helpers so that they run attempts and repairs the
same way as `frostline run` and `frostline repair`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog, Envelope
from frostline.config import Config, load_config
from frostline.providers.registry import CapabilityRegistry, open_registry
from frostline.repair.replay import ReplayPolicy
from frostline.store.base import Store

__all__ = ["default_log_path", "execute", "local_providers", "make_runner", "open_capabilities",
           "repair"]


def local_providers(log_path: Path | str | None = None, latency_s: float = 0.0) -> Any:
    from frostline.providers.local import LocalProviders

    return LocalProviders(latency_s=latency_s, log_path=str(log_path) if log_path else None)


def open_capabilities(config: Config | str | Path | None = None, *,
                      log_path: Path | str | None = None,
                      latency_s: float = 0.0) -> CapabilityRegistry:
    """The catalog and providers of a configuration, started (close it when done).

    `config` is a Config, or the --config value (a path or None) resolved with the usual
    precedence: flag > $FROSTLINE_CONFIG > ./frostline.toml > the zero-configuration default.
    """
    chosen = config if isinstance(config, Config) else load_config(config)
    return open_registry(chosen, log_path=log_path if log_path is not None
                         else default_log_path(), latency_s=latency_s)


def make_runner(name: str = "auto") -> tuple[Any, str]:
    """Return (runner, label) for `auto`, `sandbox` or `process`. `auto` picks the bubblewrap
    sandbox when its isolation profile verifies here, else the plain child process — and says
    so loudly on stderr; `sandbox` refuses to run without the sandbox."""
    from frostline.runtime.runners import ChildProcessRunner

    if name == "process":
        return ChildProcessRunner(), "plain child process (reduced isolation)"
    from frostline.runtime.sandbox_probe import verify_profile
    from frostline.runtime.sandbox_runner import SandboxRunner

    if name == "sandbox":
        verify_profile()
        return SandboxRunner(), "bubblewrap sandbox"
    try:
        verify_profile()
    except Exception as exc:  # any reason the sandbox cannot be established
        print(f"warning: the bubblewrap sandbox is unavailable here ({exc}); "
              "running scripts in a plain child process with REDUCED isolation", file=sys.stderr)
        return ChildProcessRunner(), "plain child process (reduced isolation: sandbox unavailable)"
    return SandboxRunner(), "bubblewrap sandbox"


def execute(store: Store, run_id: str, source: str, args: dict[str, Any] | None,
            envelope: Envelope | dict[str, Any] | None, providers: Any, runner: Any,
            catalog: Catalog = DEFAULT_CATALOG, *, interrupts: Any = None,
            relocation: str | None = None) -> dict[str, Any]:
    """One attempt, blocking; under `interrupts` (an `Interrupts`) it can be stopped from
    another thread (JobCancelled when the run is cancelled)."""
    from frostline.runtime.execute import execute_async

    coro = execute_async(store, run_id, source, args=args, envelope=envelope,
                         providers=providers, runner=runner, catalog=catalog,
                         relocation=relocation)
    if interrupts is None:
        import asyncio

        outcome = asyncio.run(coro)
    else:
        outcome = interrupts.run(coro, run_id=run_id)
    return dict(outcome.to_dict())


def repair(store: Store, run_id: str, model_spec: str, *, max_rewrites: int = 3,
           replay: ReplayPolicy | None = None, config: Config | None = None,
           catalog: Catalog = DEFAULT_CATALOG) -> dict[str, Any]:
    """Ask the model named by `model_spec` (a configured [models.NAME], or the environment's
    endpoint) for a repair. Stored replies (``replay:FILE``) are read only under a `replay`
    policy, which the HTTP API never passes."""
    from frostline.repair.endpoints import model_client
    from frostline.repair.loop import repair as run_loop
    from frostline.repair.loop import task_from_store

    task = task_from_store(store, run_id, max_rewrites=max_rewrites, catalog=catalog)
    client = model_client(model_spec, config, replay=replay)
    result = run_loop(client, task)
    payload = dict(result.to_dict())
    payload["model"] = {"name": getattr(client, "model", model_spec),
                        "source": getattr(client, "source", "model")}
    return payload


def default_log_path() -> str | None:
    return os.environ.get("FROSTLINE_PROVIDER_LOG")
