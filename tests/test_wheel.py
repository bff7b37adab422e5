"""Issue 27: what `python -m build` makes installs into a fresh venv and works outside the checkout.

The wheel and the sdist are built once per module (an isolated build: setuptools and wheel
come from the package index pip is configured with), installed into fresh venvs with their
dependencies from that same index (a real install, nothing borrowed from this environment), and
run from a folder outside the checkout with no PYTHONPATH: the demo (the sandboxed script runs,
the scripted repair replies, the demo's scripts shipped as package data), the HTTP API and web
UI, the MCP server over stdio (a sandboxed script run through it), and the coding workflow
(sandboxed pytest with coverage). FROSTLINE_SLOW=1 also installs the sdist and runs the demo
from it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tarfile
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = os.path.realpath(sys.executable)
VERSION = "0.1.0"
SLOW = pytest.mark.skipif(not os.environ.get("FROSTLINE_SLOW"),
                          reason="installs the sdist too; set FROSTLINE_SLOW=1 to run it")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("build") is None,
                       reason="needs `build` (pip install -e '.[dev]')"),
    pytest.mark.timeout(600),
]


def _clean_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH, no venv of the caller's: the installed package is all there is."""
    keep = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**keep, "HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300,
                          env=_clean_env(Path(out)))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _venv(root: Path, requirement: str) -> Path:
    """A fresh venv from the interpreter behind this one, with `requirement` installed by pip
    (this environment's pip, pointed at the new interpreter: no ensurepip round)."""
    subprocess.run([BASE, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"),
                           "install", "-q", requirement], capture_output=True, text=True,
                          timeout=400, env=_clean_env(root))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheel = dist / f"frostline-{VERSION}-py3-none-any.whl"
    return _venv(tmp_path_factory.mktemp("wheel") / "venv", f"{wheel}[service,mcp,coding]")


def _run(venv: Path, args: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, text=True,
                          capture_output=True, env=_clean_env(cwd), timeout=300, **kw)


def _package_files() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "frostline"], cwd=ROOT, capture_output=True,
                            text=True)
    if listed.returncode == 0 and listed.stdout:
        return set(listed.stdout.split())
    return {str(p.relative_to(ROOT)) for p in (ROOT / "frostline").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_issue27_the_wheel_and_the_sdist_hold_every_file_of_the_package(dist: Path) -> None:
    files = _package_files()
    assert {"frostline/repair/skill.md", "frostline/service/ui/logo.svg",
            "frostline/demo/scripts/brand_video_v1.py", "frostline/graph/graphs/seed.json",
            "frostline/coding/pytest_driver.py"} <= files
    in_wheel = set(zipfile.ZipFile(dist / f"frostline-{VERSION}-py3-none-any.whl").namelist())
    assert sorted(files - in_wheel) == []
    with tarfile.open(dist / f"frostline-{VERSION}.tar.gz") as tf:
        in_sdist = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    assert sorted(files - in_sdist) == []
    assert {"README.md", "pyproject.toml"} <= in_sdist


def _demo(venv: Path, cwd: Path) -> dict:
    where = _run(venv, ["python", "-c", "import frostline; print(frostline.__file__)"], cwd)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    done = _run(venv, ["frostline", "demo", "--json"], cwd)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def test_issue27_the_wheel_runs_the_demo_outside_the_checkout(installed: Path,
                                                              tmp_path: Path) -> None:
    out = _demo(installed, tmp_path)
    assert out["runner"] == "bubblewrap sandbox" or shutil.which("bwrap") is None
    assert (out["replayed"], out["executed"], out["byte_identical"]) == (4, 1, True)
    assert [a["status"] for a in out["attempts"]] == ["failed", "succeeded"]
    assert len(list((tmp_path / "frostline-demo").glob("shot-*.png"))) == 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_issue27_the_wheel_serves_the_api_and_the_ui(installed: Path, tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [str(installed / "bin" / "frostline"), "serve", "--port", str(port), "--store",
         f"sqlite:///{tmp_path}/runs.db"], cwd=tmp_path, env=_clean_env(tmp_path),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                page = httpx.get(f"{base}/", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start within 60 s"
                time.sleep(0.1)
        assert page.status_code == 200 and "/ui/app.js" in page.text
        for asset in ("app.js", "style.css", "logo.svg"):
            assert httpx.get(f"{base}/ui/{asset}", timeout=5).status_code == 200, asset
        assert "/v1/runs" in str(httpx.get(f"{base}/openapi.json", timeout=5).json()["paths"])
    finally:
        server.terminate()
        server.wait(30)


def test_issue27_the_wheel_serves_mcp_and_runs_a_script_through_it(installed: Path,
                                                                   tmp_path: Path) -> None:
    script = "async def orchestrate(ctx, args):\n    return {'sum': args['a'] + 1}\n"
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "run_script", "arguments": {"run_id": "m1", "script": script,
                                                "args": {"a": 2}}}},
    ]
    server = subprocess.Popen(
        [str(installed / "bin" / "frostline"), "mcp", "--store", f"sqlite:///{tmp_path}/runs.db"],
        cwd=tmp_path, env=_clean_env(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()
        replies: dict[object, dict] = {}
        deadline = time.monotonic() + 120
        while 3 not in replies:  # stdin stays open: closing it ends the session, calls included
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no reply to run_script within 120 s: {replies}"
            try:
                reply = json.loads(lines.get(timeout=remaining))
            except queue.Empty:
                continue
            replies[reply.get("id")] = reply
    finally:
        server.stdin.close()
        server.wait(30)
    assert "run_script" in {t["name"] for t in replies[2]["result"]["tools"]}
    result = replies[3]["result"]
    assert not result.get("isError"), result
    assert '"succeeded"' in json.dumps(result) and '"sum": 3' in json.dumps(result)


SOLVE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[2])  # the test's repository builder, not frostline
    from pathlib import Path
    from coding_repo import make_task
    from frostline.coding.arms import arm
    from frostline.coding.interface import FaultPlan
    from frostline.coding.setup import SolveSettings
    from frostline.coding.solve import solve
    from frostline.coding.testrun import SandboxSettings

    root = Path(sys.argv[1])
    t = "tests/test_core.py::"
    task = make_task(root / "src", "clamp_gt", visible=(t + "test_clamp_inside",),
                     hidden=(t + "test_clamp_above", t + "test_clamp_edges"))
    out = solve(task, arm("arm4"), FaultPlan(), workdir=root / "w",
                settings=SolveSettings(sandbox=SandboxSettings(wall_seconds=120, test_timeout=5)))
    print(json.dumps({"status": out.status, "reason": out.reason,
                      "resolved": out.instruments.resolved}))
""")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_issue27_the_wheel_runs_the_coding_workflow(installed: Path, tmp_path: Path) -> None:
    done = _run(installed, ["python", "-c", SOLVE, str(tmp_path),
                            str(ROOT / "tests" / "coding")], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"status": "ACCEPT", "reason": "",
                                                        "resolved": 1}


@SLOW
def test_issue27_the_sdist_installs_and_runs_the_demo(dist: Path, tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv", str(dist / f"frostline-{VERSION}.tar.gz"))
    work = tmp_path / "work"
    work.mkdir()
    assert _demo(venv, work)["byte_identical"] is True
