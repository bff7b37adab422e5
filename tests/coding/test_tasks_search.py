"""`frostline tasks search` against a real HTTP index on localhost serving the tinycalc
fixture's releases: every consecutive pair gets a record with its reason, the archives are
checked against the SHA-256 the index lists."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.tasks import tasks as tasks_cli
from frostline.coding.tasks.errors import FetchError
from frostline.coding.tasks.fetch import INDEX_ENV
from frostline.coding.tasks.search import releases_of, search, source_roots
from tests.coding.release_fixture import RELEASES, sdist


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """An index serving tinycalc's description and sdists; tests may replace a file's bytes."""
    files: dict[str, bytes] = {}
    releases = {}
    for version in RELEASES:
        a = sdist(tmp_path / "index", version)
        files[f"/files/{a.filename}"] = (tmp_path / "index" / a.filename).read_bytes()
        releases[version] = [{"filename": a.filename, "packagetype": "sdist", "yanked": False,
                              "url": f"../../files/{a.filename}",
                              "digests": {"sha256": a.sha256}}]
    releases["2.0rc1"] = releases["1.3"]  # a pre-release is not a release to compare
    files["/pypi/tinycalc/json"] = json.dumps({"releases": releases}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(INDEX_ENV, f"http://127.0.0.1:{server.server_address[1]}/pypi/")
    yield files
    server.shutdown()
    server.server_close()


def test_every_consecutive_pair_gets_a_record(index: dict[str, bytes], tmp_path: Path) -> None:
    assert [a.version for a in releases_of("tinycalc", 25)] == list(RELEASES)
    assert [a.version for a in releases_of("tinycalc", 2)] == ["1.2", "1.3"]
    records = search("tinycalc", tmp_path / "cache", 25)
    assert [(r["older"], r["newer"], r["verdict"]) for r in records] == [
        ("1.0", "1.1", "screened"), ("1.1", "1.2", "source_files:2"), ("1.2", "1.3", "screened")]
    first = records[0]
    assert first["fix_file"] == "tinycalc/core.py" and first["fix_lines"] == 2
    assert first["tests"] == ["tests/test_core.py"] and first["roots"] == ["tinycalc"]
    assert [a[0] for a in first["archives"]] == ["tinycalc-1.0.tar.gz", "tinycalc-1.1.tar.gz"]


def test_the_cli_writes_the_record_and_counts(index: dict[str, bytes], tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    r = CliRunner().invoke(tasks_cli, ["search", "--packages", "tinycalc", "--out", str(out),
                                       "--cache", str(tmp_path / "cache"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"pairs": 3, "screened": 2,
                                    "verdicts": {"screened": 2, "source_files": 1}}
    assert len(out.read_text().splitlines()) == 3
    r = CliRunner().invoke(tasks_cli, ["search", "--packages", "tinycalc", "--out", str(out),
                                       "--last", "1"])
    assert r.exit_code == 2 and "at least 2" in r.output


def test_an_archive_that_is_not_the_listed_one_is_refused(index: dict[str, bytes],
                                                         tmp_path: Path) -> None:
    index["/files/tinycalc-1.1.tar.gz"] = b"other bytes"
    with pytest.raises(FetchError, match="does not match"):
        search("tinycalc", tmp_path / "cache", 25)
    r = CliRunner().invoke(tasks_cli, ["search", "--packages", "leftpad", "--out",
                                       str(tmp_path / "x.jsonl"), "--cache",
                                       str(tmp_path / "cache"), "--json"])
    assert r.exit_code == 1 and "leftpad" in json.loads(r.stdout)["error"]["message"]


def test_source_roots_leave_out_tests_docs_and_scripts(tmp_path: Path) -> None:
    for rel in ("pkg/__init__.py", "mod.py", "setup.py", "test_mod.py", "docs/conf.py",
                "src/other/__init__.py", "tests/__init__.py", "notapkg/x.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert source_roots(tmp_path) == ("mod.py", "pkg", "src/other")
