"""What the `frostline` commands share, so they fail, print and open the store the same way.

- Exit codes: one table for every command (`EXIT_CODES`, printed in docs/cli.md). A code means
  the same thing wherever it appears; a command uses the rows that can happen to it.
- `--json` puts one JSON document on stdout, errors included: `{"error": {"code", "message",
  …}}`, the same inner object the HTTP API answers with; without it, an error is one line on
  stderr. Click's own usage errors follow `--json` too (`Command`, `Group`).
- Human output goes through `console()`: every string that comes from a user, a script or a
  store is escaped before rich sees it (`[postgres]` is text, not markup), and output that is
  not a terminal is never cut to 80 columns.
- `--store URL`: flag > $FROSTLINE_STORE > the default SQLite file (see `frostline.store`). A
  command that only reads opens the store with `create=False`: reading never creates one.
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
from rich.markup import escape

from frostline.contract.status import EXIT_CODES as EXIT_CODES
from frostline.contract.status import exit_of_error
from frostline.errors import (
    FrostlineError,
    RunNotFound,
    SandboxUnavailable,
)

if TYPE_CHECKING:
    from frostline.capabilities.catalog import Catalog
    from frostline.providers.registry import CapabilityRegistry
    from frostline.runtime.runners import Runner
    from frostline.store import Store

# name -> (code, meaning): the one table of frostline.contract.status, which docs/cli.md
# prints; tests/cli/test_exit_codes.py holds every command to it.

EXIT_OK = EXIT_CODES["ok"][0]
EXIT_FAILED = EXIT_CODES["failed"][0]
EXIT_USAGE = EXIT_CODES["usage"][0]
EXIT_STOPPED = EXIT_CODES["stopped"][0]
EXIT_DIVERGED = EXIT_CODES["diverged"][0]
EXIT_UNRESOLVED = EXIT_CODES["unresolved"][0]
EXIT_REJECTED = EXIT_CODES["rejected"][0]
EXIT_STORE_UNAVAILABLE = EXIT_CODES["store_unavailable"][0]
EXIT_SANDBOX_UNAVAILABLE = EXIT_CODES["sandbox_unavailable"][0]
EXIT_STUCK = EXIT_CODES["stuck"][0]
EXIT_WAITING = EXIT_CODES["waiting"][0]

_NAME_OF = {code: name for name, (code, _) in EXIT_CODES.items()}

# Wide enough that rich never wraps or truncates a line of output that is not a terminal.
UNBOUNDED_WIDTH = 1_000_000

T = TypeVar("T")

store_option = click.option("--store", "store_url", default=None, metavar="URL",
                            help="Run store URL (default: $FROSTLINE_STORE or ./.frostline/).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
config_option = click.option("--config", "config_file", default=None, metavar="FILE",
                             help="Capabilities configuration (default: $FROSTLINE_CONFIG, else "
                                  "./frostline.toml, else the built-in catalog).")


# ------------------------------------------------------------------------------------- output
def console(*, stderr: bool = False) -> Console:
    """The console human output goes to: a terminal's width, or unbounded when piped."""
    probe = Console(stderr=stderr, highlight=False)
    if probe.is_terminal:
        return probe
    return Console(stderr=stderr, highlight=False, width=UNBOUNDED_WIDTH, soft_wrap=True)


def text(value: object) -> str:
    """`value` as literal text for rich: its square brackets are never read as markup."""
    return escape(str(value))


def emit_json(data: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> None:
    """Print `data` as JSON on stdout; values JSON has no type for print as their str()."""
    click.echo(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, default=str))


def error_object(message: str, exit_code: int, err: FrostlineError | None = None,
                 **fields: Any) -> dict[str, Any]:
    """The inner object of every error frostline prints or answers: code and message first.

    Without an error object the code names the exit code's row (`usage`, `failed`, …).
    """
    if err is not None:
        # The command line is the operator's own view: the full message and fields, even
        # where `to_dict()` (what clients of a server see) keeps them back (a store failure).
        own = {**err.to_dict(), **err.fields, "message": err.message}
        return {"code": own["code"], "message": own["message"], **own, **fields}
    return {"code": _NAME_OF.get(exit_code, "error"), "message": message, **fields}


def fail(message: str, exit_code: int, as_json: bool, err: FrostlineError | None = None,
         *, json_lines: bool = False, **fields: Any) -> NoReturn:
    """Report an error and exit with `exit_code`. `fields` join the JSON error object (a
    `code` among them names the error, else the exit code's row does).

    With --json the error goes to stdout as `{"error": {...}}` (see `error_object`), so a
    machine reading stdout always gets one JSON document (one line with `json_lines`, for
    commands that print JSON lines); else one line on stderr.
    """
    if as_json:
        emit_json({"error": error_object(message, exit_code, err, **fields)},
                  indent=None if json_lines else 2)
    else:
        # One line, whatever the message carries (a driver's error may span several).
        console(stderr=True).print(f"[bold red]error:[/] {text(' '.join(message.split()))}")
    sys.exit(exit_code)


def exit_code_of(err: FrostlineError, default: int = EXIT_FAILED) -> int:
    """The table's row for `err` (frostline.contract.status.ERRORS): its own row when it has
    one (usage for what the caller fixes in its input: a definition, a run id, a store
    location), else `default`."""
    return exit_of_error(err, default)


def fail_with(err: FrostlineError, as_json: bool, code: int | None = None, *,
              json_lines: bool = False) -> NoReturn:
    """`fail` with the error's own message, and the exit code of its kind unless `code` says;
    a sandbox that cannot be established gets its one-line message (`fail_sandbox`)."""
    if err.code == "sandbox_unavailable" and code is None:
        fail_sandbox(err, as_json)
    fail(err.message, exit_code_of(err) if code is None else code, as_json, err,
         json_lines=json_lines)


def guarded(as_json: bool, action: Callable[[], T]) -> T:
    """Run `action`; a frostline error it raises becomes `fail_with`."""
    try:
        return action()
    except FrostlineError as err:
        fail_with(err, as_json)


# ------------------------------------------------------------------------------- click classes
class Command(click.Command):
    """A click command whose own usage errors (a missing option, a bad choice) follow --json:
    one JSON error on stdout and exit 2, like every other error of the command."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        wants_json = "--json" in args
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if not wants_json:
                raise
            fail(exc.format_message(), EXIT_USAGE, True)


class Group(click.Group):
    """A command group whose subcommands are `Command`s."""

    command_class = Command


# ------------------------------------------------------------------------------------- stores
@contextmanager
def opened_store(store_url: str | None, as_json: bool, *, create: bool = True
                 ) -> Iterator[Store]:
    """Open the store named by --store, closing it afterwards.

    `create=False` for commands that only read: a store that does not exist is a usage error,
    and nothing is created. A malformed URL is a usage error; a store that cannot be reached
    exits with the table's `store_unavailable` code.
    """
    from frostline.store import open_store

    try:
        store = open_store(store_url, create=create)
    except FrostlineError as err:
        fail_with(err, as_json)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def opened_run(store_url: str | None, run_id: str, as_json: bool) -> Iterator[Store]:
    """`opened_store` for reading, and RUN_ID must exist in it (else a usage error naming the
    store)."""
    with opened_store(store_url, as_json, create=False) as store:
        try:
            if store.get_run(run_id) is None:
                raise RunNotFound(f"no run {run_id!r} in the store {store.url}; check the run id "
                                  "(another principal's runs are @OWNER/NAME: see `frostline "
                                  "runs`) and --store", run_id=run_id)
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


def configured_catalog(config_file: str | None, as_json: bool) -> Catalog:
    """The catalog of the configuration in force (--config > $FROSTLINE_CONFIG >
    ./frostline.toml), for a command that only reads it: with no file, the built-in catalog
    without starting anything; with one, its providers are started to list their capabilities
    (an MCP server's tools), then stopped."""
    from frostline.capabilities.catalog import DEFAULT_CATALOG
    from frostline.config import config_path

    path = guarded(as_json, lambda: config_path(config_file))
    if path is None:
        return DEFAULT_CATALOG
    with opened_capabilities(str(path), as_json) as registry:
        return registry.catalog


# ------------------------------------------------------------------------------------- inputs
def json_arg_text(value: str) -> str:
    """The text of a `JSON|@FILE` argument: the value itself, or the content of the file it
    names after the @. Raises OSError when that file cannot be read."""
    return Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value


def read_json_arg(value: str, what: str, as_json: bool, *, want_object: bool = False) -> Any:
    """`value` is JSON text, or @FILE naming a JSON file; anything else is a usage error.

    `want_object`: the value must be a JSON object (script args are read as `args["key"]`).
    """
    try:
        raw = json_arg_text(value)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        fail(f"cannot read {what} file {value[1:]!r}: {reason}", EXIT_USAGE, as_json)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"{what} is not valid JSON ({exc}); {what} must be JSON text or @FILE holding "
             "JSON", EXIT_USAGE, as_json)
    if want_object and not isinstance(data, dict):
        fail(f"{what} must be a JSON object such as '{{\"brief\": \"a fox\"}}', not "
             f"{type(data).__name__} {raw.strip()[:40]!r}", EXIT_USAGE, as_json)
    return data


def read_text_file(path: Path, what: str, as_json: bool) -> str:
    """The UTF-8 text of `path` ('-' is stdin); a missing or unreadable file is a usage error."""
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{what} {str(path)!r} does not exist", EXIT_USAGE, as_json)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"cannot read {what} {str(path)!r}: {reason}", EXIT_USAGE, as_json)


# ------------------------------------------------------------------------------------ runners
SANDBOX_FIX = "or pass --runner process to run in a plain child process (reduced isolation)"


def sandbox_message(err: FrostlineError) -> str:
    """One line for a sandbox that cannot be established: what failed, and the fix."""
    first = err.message.split("; ")[0].split(". ")[0].rstrip(".")
    fix = ("install bubblewrap (apt-get install bubblewrap)" if "not found" in first
           else "allow unprivileged user namespaces and seccomp for bubblewrap (docs/sandbox.md)")
    return f"the sandbox cannot be established here: {first}. Fix: {fix}, {SANDBOX_FIX}"


def fail_sandbox(err: FrostlineError, as_json: bool) -> NoReturn:
    """Exit with the table's `sandbox_unavailable` code and the one-line message; the JSON
    error keeps the full explanation in `detail`."""
    fail(sandbox_message(err), EXIT_SANDBOX_UNAVAILABLE, as_json, detail=err.message)


def make_runner(kind: str, timeout_s: float, as_json: bool) -> Runner:
    """The runner named by `--runner`: `process` (a plain child process) or `sandbox`.

    The sandbox is proven on this machine before anything is opened or recorded; when it
    cannot be established (or is not part of this installation) the command exits with the
    `sandbox_unavailable` code: falling back to weaker isolation silently would hide that
    choice from the user.
    """
    from frostline.runtime.runners import ChildProcessRunner

    if kind == "process":
        return ChildProcessRunner(timeout_s=timeout_s)
    try:
        # Imported by name: the sandbox is an optional part of an installation.
        module = importlib.import_module("frostline.runtime.sandbox_runner")
        probe = importlib.import_module("frostline.runtime.sandbox_probe")
    except ImportError:
        fail_sandbox(SandboxUnavailable("the sandbox runner is not part of this installation"),
                     as_json)
    runner = module.SandboxRunner(timeout_s=timeout_s)
    try:
        probe.verify_profile(runner.profile)
    except FrostlineError as err:
        fail_sandbox(err, as_json)
    return runner  # type: ignore[no-any-return]


def relocation_option(fn: Any) -> Any:
    """`--relocation stop|rebind`: what a gate stop caused only by moved committed calls
    becomes (docs/contract.md); default: the run's envelope."""
    return click.option(
        "--relocation", type=click.Choice(["stop", "rebind"]), default=None,
        help="stop: a moved committed call stops the candidate (the callsite gate); rebind: a "
             "dry replay may admit it when its request is unchanged. Default: the run's "
             "envelope (a new run keeps it).")(fn)
