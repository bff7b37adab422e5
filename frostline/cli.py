"""The `frostline` command. Thin click commands over the library; each package owns its own
commands module and this file only wires them together.

Configuration precedence, everywhere: flag > environment variable > default.
- store URL: --store > FROSTLINE_STORE > sqlite file ./.frostline/frostline.db
"""

from __future__ import annotations

import importlib

import click

from frostline import __version__

# (module, attribute) pairs; each attribute is a click command or group.
_COMMANDS: list[tuple[str, str]] = [

]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="frostline")
def main() -> None:
    """frostline: revision-safe execution of model-written workflow scripts."""


for _module, _attr in _COMMANDS:
    main.add_command(getattr(importlib.import_module(_module), _attr))
