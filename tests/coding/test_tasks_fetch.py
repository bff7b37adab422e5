"""Archives: the pinned bytes or nothing, and unpacking that never writes outside its folder."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from frostline.coding.tasks.errors import FetchError
from frostline.coding.tasks.fetch import (
    default_cache,
    extract_tar,
    fetch,
    sha256_of,
    unpack,
)
from frostline.coding.tasks.pins import DEPS, PACKAGES, Archive


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


def _link(tf: tarfile.TarFile, name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    tf.addfile(info)


def _hostile(path: Path, case: str) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        _link(tf, "pkg-1/ok-link", "ok.py")  # inside: allowed
        if case == "symlink_out":
            _link(tf, "pkg-1/evil", "../../evil.py")
        elif case == "symlink_absolute":
            _link(tf, "pkg-1/evil", "/etc/passwd")
        elif case == "hardlink_out":
            _link(tf, "pkg-1/evil", "../evil.py", tarfile.LNKTYPE)
        elif case == "through_a_link":  # each link inside on its own, the pair leads out
            _link(tf, "pkg-1/here", ".")
            _link(tf, "pkg-1/here/up", "../../evil.py")
        elif case == "device":
            info = tarfile.TarInfo("pkg-1/null")
            info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            tf.addfile(info)
    return path


@pytest.mark.parametrize("native", [True, False], ids=["data_filter", "fallback"])
@pytest.mark.parametrize("case", ["symlink_out", "symlink_absolute", "hardlink_out",
                                  "through_a_link", "device"])
def test_issue27_extraction_refuses_what_the_data_filter_refuses(
        tmp_path: Path, case: str, native: bool) -> None:
    if native and not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python's tarfile has no filters (before 3.11.4): the fallback runs")
    src = _hostile(tmp_path / "a.tar.gz", case)
    dest = tmp_path / "out"
    dest.mkdir()
    with tarfile.open(src) as tf, pytest.raises(FetchError, match="refus"):
        extract_tar(tf, dest, native=native)
    assert not (tmp_path / "evil.py").exists()


def test_issue27_the_fallback_extracts_safe_modes_and_no_owner(tmp_path: Path) -> None:
    src = tmp_path / "a.tar.gz"
    with tarfile.open(src, "w:gz") as tf:
        for name, mode in (("pkg-1/run.sh", 0o6777), ("pkg-1/data.txt", 0o646)):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = 2, mode, 4242, 4242
            tf.addfile(info, io.BytesIO(b"ok"))
        _link(tf, "pkg-1/link", "data.txt")
    with tarfile.open(src) as tf:
        extract_tar(tf, tmp_path / "out", native=False)
    run, data = tmp_path / "out/pkg-1/run.sh", tmp_path / "out/pkg-1/data.txt"
    assert run.stat().st_mode & 0o7777 == 0o755
    assert data.stat().st_mode & 0o7777 == 0o644
    assert run.stat().st_uid == os.getuid()
    assert (tmp_path / "out/pkg-1/link").read_bytes() == b"ok"


def test_issue27_unpack_works_on_a_python_without_tar_filters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Debian 12's Python 3.11.2: TarFile.extractall() has no `filter` argument.
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    src = _tar(tmp_path / "a.tar.gz", {"pkg-1/setup.py": b"x", "pkg-1/pkg/__init__.py": b""})
    dest = unpack(src, tmp_path / "out" / "pkg", strip_top=True)
    assert (dest / "setup.py").read_bytes() == b"x" and (dest / "pkg/__init__.py").is_file()
    with pytest.raises(FetchError, match="refus"):
        unpack(_hostile(tmp_path / "b.tar.gz", "symlink_out"), tmp_path / "out" / "b",
               strip_top=True)


def test_issue27_a_cache_under_tmp_is_accepted(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The sandbox mounts the trees it reads after its private /tmp, so a cache there works;
    # with no index reachable, the build gets as far as downloading.
    from frostline.coding.tasks.build import BuildOptions, build

    assert str(tmp_path).startswith("/tmp/")
    monkeypatch.setenv("FROSTLINE_INDEX_URL", "http://127.0.0.1:9/pypi/")
    with pytest.raises(FetchError, match="cannot download"):
        build(BuildOptions(out=tmp_path / "out", cache=tmp_path / "cache", packages=("parse",)))
