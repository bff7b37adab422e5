"""Archives: the pinned bytes or nothing, and unpacking that never writes outside its folder."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from frostline.graph.coding.tasks.errors import FetchError
from frostline.graph.coding.tasks.fetch import default_cache, fetch, sha256_of, unpack
from frostline.graph.coding.tasks.pins import DEPS, PACKAGES, Archive


def test_every_pin_is_complete() -> None:
    assert len(PACKAGES) >= 10
    for archive in [*(s.archive for s in PACKAGES.values()), *DEPS.values()]:
        assert len(archive.sha256) == 64 and int(archive.sha256, 16) >= 0
        assert archive.version in archive.filename
    for spec in PACKAGES.values():
        assert spec.test_paths and spec.mutate and set(spec.deps) <= set(DEPS)


def test_a_cached_file_that_changed_is_refused(tmp_path: Path) -> None:
    archive = Archive("demo", "1.0", "demo-1.0.tar.gz", "0" * 64)
    (tmp_path / "archives").mkdir()
    (tmp_path / "archives" / archive.filename).write_bytes(b"tampered")
    with pytest.raises(FetchError, match="delete it and build again") as err:
        fetch(archive, tmp_path)
    assert err.value.fields["got"] == sha256_of(tmp_path / "archives" / archive.filename)


def test_an_unreachable_index_is_a_fetch_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setenv("FROSTLINE_INDEX_URL", "http://127.0.0.1:9/pypi/")
    with pytest.raises(FetchError, match="cannot download"):
        fetch(Archive("demo", "1.0", "demo-1.0.tar.gz", "0" * 64), tmp_path)


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_unpack_strips_the_top_folder(tmp_path: Path) -> None:
    src = _tar(tmp_path / "a.tar.gz", {"pkg-1/setup.py": b"x", "pkg-1/pkg/__init__.py": b""})
    dest = unpack(src, tmp_path / "out" / "pkg", strip_top=True)
    assert sorted(p.name for p in dest.iterdir()) == ["pkg", "setup.py"]
    unpack(src, dest, strip_top=True)  # again: replaced, not merged
    assert (dest / "setup.py").read_bytes() == b"x"


@pytest.mark.parametrize("name", ["../evil.py", "/abs/evil.py", "pkg-1/../../evil.py"])
def test_unpack_refuses_members_outside(tmp_path: Path, name: str) -> None:
    src = _tar(tmp_path / "a.tar.gz", {"pkg-1/ok.py": b"", name: b"boom"})
    with pytest.raises(FetchError, match="outside"):
        unpack(src, tmp_path / "out" / "x", strip_top=True)
    assert not (tmp_path / "evil.py").exists() and not list(tmp_path.glob("out/.x-*"))


def test_cache_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FROSTLINE_CACHE", str(tmp_path / "env"))
    assert default_cache(tmp_path / "flag") == tmp_path / "flag"
    assert default_cache() == tmp_path / "env"
    monkeypatch.delenv("FROSTLINE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache() == tmp_path / "xdg" / "frostline"
