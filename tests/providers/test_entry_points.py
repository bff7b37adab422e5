"""A capability from an installed package's `frostline.capabilities` entry point: a small
package is written as a wheel (a zip file: no build backend, no network), installed with pip
into a temporary virtual environment, and a run in that environment calls it through the
broker."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from frostline.runtime.sandbox_env import environment_paths

ROOT = Path(__file__).resolve().parents[2]

DIST = "frostline_weather_plugin-1.0"
FILES = {
    "weather_plugin/__init__.py": textwrap.dedent('''
        from frostline.capabilities import capability

        @capability("weather.forecast", price_usd=0.003, effect="read_only")
        async def forecast(city: str, days: int = 1) -> dict:
            """A forecast for a city."""
            return {"city": city, "days": days, "sky": "clear"}
    '''),
    f"{DIST}.dist-info/METADATA": "Metadata-Version: 2.1\nName: frostline-weather-plugin\n"
                                  "Version: 1.0\n",
    f"{DIST}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                               "Tag: py3-none-any\n",
    f"{DIST}.dist-info/entry_points.txt": "[frostline.capabilities]\nweather = weather_plugin\n",
}


def wheel(directory: Path) -> Path:
    """A pure-Python wheel of FILES, with the RECORD pip checks."""
    path = directory / f"{DIST}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in FILES.items():
            data = text.encode()
            zf.writestr(name, data)
            sha = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={sha},{len(data)}")
        record.append(f"{DIST}.dist-info/RECORD,,")
        zf.writestr(f"{DIST}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


DRIVER = """
import json, sys
from frostline.config import parse_config
from frostline.providers.registry import open_registry
from frostline.runtime.execute import execute
from frostline.testing import InProcessRunner
from frostline.store import open_store

config = parse_config({"providers": {"plugins": {"kind": "python", "entry_points": True}}})
script = '''
async def orchestrate(ctx, args):
    return await ctx.run("weather.forecast", {"city": "Lisbon", "days": 3})
'''
with open_registry(config) as registry, open_store(sys.argv[1]) as store:
    entry = registry.catalog["weather.forecast"]
    out = execute(store, "w", script, providers=registry, runner=InProcessRunner(),
                  catalog=registry.catalog)
    print(json.dumps({"status": out.status, "result": out.result, "effect": entry.effect,
                      "price": entry.price_usd, "provider": registry.provider_of(entry.name)}))
"""


@pytest.mark.timeout(300)
def test_an_entry_point_capability_from_a_package_installed_in_a_venv(tmp_path):
    package = wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # frostline's dependencies: this process's environment, through a .pth. (A venv made with
    # --system-site-packages sees the *base* interpreter's site-packages, which lack them
    # when this process runs in a venv of its own, as `.ci/run` does: issue 27.)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "parent-env.pth").write_text("\n".join(environment_paths()) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(package)], check=True,
                   env=env, capture_output=True)
    done = subprocess.run([str(python), "-c", DRIVER, f"sqlite:///{tmp_path}/runs.db"],
                          check=True, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "status": "succeeded", "result": {"city": "Lisbon", "days": 3, "sky": "clear"},
        "effect": "read_only", "price": 0.003, "provider": "plugins"}
    # the package is installed in the venv only: this interpreter does not see it
    from importlib import metadata

    assert "weather" not in {p.name for p in metadata.entry_points(
        group="frostline.capabilities")}
