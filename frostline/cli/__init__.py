"""The `frostline` command: thin click commands over the library, and the only part of
frostline that knows about click and rich. One module per command group; this one wires them
together, importing a command's module only when that command runs (so `frostline check` never
pays for FastAPI's import). `frostline.cli.common` holds what the commands share.

Configuration precedence, everywhere: flag > environment variable > file > default (written
down for users in docs/configuration.md).
- store URL: --store > FROSTLINE_STORE > sqlite file ./.frostline/frostline.db
- capabilities: --config > FROSTLINE_CONFIG > ./frostline.toml > the built-in catalog
- model endpoint: a configured [models.NAME], else FROSTLINE_MODEL_BASE_URL /
  FROSTLINE_MODEL_API_KEY > OPENAI_* > default
"""

from __future__ import annotations

import importlib

import click

from frostline import __version__

__all__ = ["COMMANDS", "LazyGroup", "main"]

# command name -> (module, attribute); each attribute is a click command or group.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("frostline.cli.demo", "demo"),
    "check": ("frostline.cli.check", "check"),
    "run": ("frostline.cli.run", "run_command"),
    "show": ("frostline.cli.run", "show_command"),
    "reconcile": ("frostline.cli.run", "reconcile_command"),
    "approve": ("frostline.cli.waits", "approve_command"),
    "signal": ("frostline.cli.waits", "signal_command"),
    "resume": ("frostline.cli.waits", "resume_command"),
    "cancel": ("frostline.cli.cancel", "cancel_command"),
    "runs": ("frostline.cli.runs", "runs_command"),
    "artifacts": ("frostline.cli.runs", "artifacts_command"),
    "gate": ("frostline.cli.contract", "gate_command"),
    "cert": ("frostline.cli.contract", "cert_command"),
    "orphans": ("frostline.cli.contract", "orphans_command"),
    "repair": ("frostline.cli.repair", "repair_command"),
    "author": ("frostline.cli.author", "author_command"),
    "do": ("frostline.cli.author", "do_command"),
    "graph": ("frostline.cli.graph", "graph"),
    "tasks": ("frostline.cli.tasks", "tasks"),
    "ab": ("frostline.cli.ab", "ab"),
    "serve": ("frostline.cli.serve", "serve"),
    "token": ("frostline.cli.token", "token"),
    "catalog": ("frostline.cli.catalog", "catalog"),
    "mcp": ("frostline.cli.mcp", "mcp"),
    "worker": ("frostline.cli.worker", "worker"),
    "submit": ("frostline.cli.worker", "submit"),
    "workers": ("frostline.cli.worker", "workers"),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target
        command = getattr(importlib.import_module(module), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attr} is not a click command")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="frostline")
def main() -> None:
    """frostline: revision-safe execution of model-written workflow scripts."""
