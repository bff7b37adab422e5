"""What the `frostline` commands share, so they fail, print and open the store the same way.

- Exit codes: 0 success, 1 the operation failed (store, model, verification), 2 usage (bad
  input, unknown run), 3 stopped (by the gate, or no accepted candidate). Commands with more
  outcomes (`run`, `graph run`) add their own codes above these.
- `--json` puts one JSON document on stdout, errors included (`{"error": {...}}`); without it,
  an error is one line on stderr.
- `--store URL`: flag > $FROSTLINE_STORE > the default SQLite file (see `frostline.store`).
- `--config FILE`: flag > $FROSTLINE_CONFIG > ./frostline.toml > none (the built-in catalog and
  the local providers); see `frostline.config`. A bad file exits 2, naming the file and key; a
  provider that cannot be started (an MCP server) exits 1, naming it.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console

from frostline.errors import DefinitionError, FrostlineError, RunNotFound, ScriptRejected

if TYPE_CHECKING:
    from frostline.providers.registry import CapabilityRegistry
    from frostline.runtime.runners import Runner
    from frostline.store import Store

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_STOPPED = 0, 1, 2, 3

T = TypeVar("T")

store_option = click.option("--store", "store_url", default=None, metavar="URL",
                            help="Run store URL (default: $FROSTLINE_STORE or ./.frostline/).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
config_option = click.option("--config", "config_file", default=None, metavar="FILE",
                             help="Capabilities configuration (default: $FROSTLINE_CONFIG, else "
                                  "./frostline.toml, else the built-in catalog).")


def emit_json(data: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> None:
    """Print `data` as JSON on stdout; values JSON has no type for print as their str()."""
    click.echo(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, default=str))


def fail(message: str, code: int, as_json: bool, err: FrostlineError | None = None) -> NoReturn:
    """Report an error and exit with `code`.

    With --json the error goes to stdout as `{"error": err.to_dict()}` (or just the message when
    there is no error object), so a machine reading stdout always gets one JSON document.
    """
    if as_json:
        emit_json({"error": err.to_dict() if err is not None else {"message": message}})
    else:
        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {message}",
                                                   highlight=False)
    sys.exit(code)


def exit_code_of(err: FrostlineError) -> int:
    """Usage for what the caller fixes in its input (a definition, a run id, a script), else
    failed."""
    return (EXIT_USAGE if isinstance(err, RunNotFound | ScriptRejected | DefinitionError)
            else EXIT_FAILED)


def fail_with(err: FrostlineError, as_json: bool, code: int | None = None) -> NoReturn:
    """`fail` with the error's own message, and the exit code of its kind unless `code` says."""
    fail(err.message, exit_code_of(err) if code is None else code, as_json, err)


def guarded(as_json: bool, action: Callable[[], T]) -> T:
    """Run `action`; a frostline error it raises becomes `fail_with`."""
    try:
        return action()
    except FrostlineError as err:
        fail_with(err, as_json)


@contextmanager
def opened_store(store_url: str | None, as_json: bool) -> Iterator[Store]:
    """Open the store named by --store, closing it afterwards; a store that cannot be opened is
    a usage error when its URL is wrong and a failure otherwise."""
    from frostline.store import open_store

    try:
        store = open_store(store_url)
    except FrostlineError as err:
        fail_with(err, as_json, EXIT_USAGE if isinstance(err, DefinitionError) else EXIT_FAILED)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def opened_run(store_url: str | None, run_id: str, as_json: bool) -> Iterator[Store]:
    """`opened_store`, and RUN_ID must exist in it (else a usage error naming the store)."""
    with opened_store(store_url, as_json) as store:
        try:
            if store.get_run(run_id) is None:
                raise RunNotFound(f"no run {run_id!r} in the store {store.url}; check the run id "
                                  "and --store", run_id=run_id)
        except FrostlineError as err:
            fail_with(err, as_json)
        yield store


@contextmanager
def opened_capabilities(config_file: str | None, as_json: bool) -> Iterator[CapabilityRegistry]:
    """The catalog and providers of the configuration, started for the command's duration
    (MCP servers included) and stopped afterwards."""
    from frostline.embedded import open_capabilities

    registry = guarded(as_json, lambda: open_capabilities(config_file))
    try:
        yield registry
    finally:
        registry.close()


def json_arg_text(value: str) -> str:
    """The text of a `JSON|@FILE` argument: the value itself, or the content of the file it
    names after the @. Raises OSError when that file cannot be read."""
    return Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value


def make_runner(kind: str, timeout_s: float) -> Runner:
    """The runner named by `--runner`: `process` (a plain child process) or `sandbox`.

    Raises DefinitionError when the sandbox is not part of this installation: falling back to
    weaker isolation silently would hide that choice from the user.
    """
    from frostline.runtime.runners import ChildProcessRunner

    if kind == "process":
        return ChildProcessRunner(timeout_s=timeout_s)
    try:
        # Imported by name: the sandbox is an optional part of an installation.
        module = importlib.import_module("frostline.runtime.sandbox_runner")
    except ImportError:
        raise DefinitionError("the sandbox runner is not available in this installation; pass "
                              "--runner process to run in a plain child process (reduced "
                              "isolation)") from None
    runner: Runner = module.SandboxRunner(timeout_s=timeout_s)
    return runner
