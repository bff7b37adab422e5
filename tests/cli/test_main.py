"""The `frostline` command wires its command modules, importing each one lazily."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from frostline.cli import COMMANDS, main


def test_every_command_resolves_and_has_help():
    runner = CliRunner()
    listing = runner.invoke(main, ["--help"])
    assert listing.exit_code == 0
    for name in COMMANDS:
        assert name in listing.output
        res = runner.invoke(main, [name, "--help"])
        assert res.exit_code == 0, (name, res.output)


def test_unknown_command_is_a_usage_error():
    assert CliRunner().invoke(main, ["no-such-command"]).exit_code == 2


def test_check_does_not_import_the_service():
    code = ("import sys; from frostline.cli import main; "
            "from click.testing import CliRunner; CliRunner().invoke(main, ['check', '--help']); "
            "print('fastapi' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
