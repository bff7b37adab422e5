"""Download pinned archives from the package index, verify them, and unpack them safely.

An archive is fetched once into a cache outside any repository (`default_cache`), written
atomically, and checked against its pinned SHA-256 every time it is used, so a cached file that
was altered is refused like a download that was. Unpacking refuses members that would land
outside the destination (absolute paths, `..`, links out), whatever the archive claims.

Cache location: ``--cache DIR`` > ``$FROSTLINE_CACHE`` > ``$XDG_CACHE_HOME/frostline`` >
``~/.cache/frostline``. Index: ``$FROSTLINE_INDEX_URL`` (the JSON API's base, default PyPI).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from frostline.graph.coding.tasks.errors import FetchError
from frostline.graph.coding.tasks.pins import Archive

__all__ = ["INDEX_ENV", "default_cache", "fetch", "sha256_of", "unpack"]

INDEX_ENV = "FROSTLINE_INDEX_URL"
_DEFAULT_INDEX = "https://pypi.org/pypi/"
_TIMEOUT_S = 60.0


def default_cache(flag: str | os.PathLike[str] | None = None) -> Path:
    """The cache directory under the precedence of the module docstring."""
    if flag is not None:
        return Path(flag)
    if os.environ.get("FROSTLINE_CACHE"):
        return Path(os.environ["FROSTLINE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "frostline"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _index_url(archive: Archive) -> str:
    base = os.environ.get(INDEX_ENV) or _DEFAULT_INDEX
    # The project's description (its `releases` list every version's files): release-level
    # descriptions are not served by every mirror of the index.
    return urllib.parse.urljoin(base.rstrip("/") + "/", f"{archive.name}/json")


def _read(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            data: bytes = response.read()
            return data
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"cannot download {url}: {reason}; check the network or set "
                         f"${INDEX_ENV}", url=url) from exc


def _file_url(archive: Archive) -> str:
    """The download address of `archive`, from the index's JSON description of its release."""
    meta_url = _index_url(archive)
    try:
        meta = json.loads(_read(meta_url))
        files = meta["releases"][archive.version]
    except (ValueError, KeyError, TypeError) as exc:
        raise FetchError(f"the index's description {meta_url} lists no release "
                         f"{archive.version} of {archive.name}", url=meta_url) from exc
    for entry in files:
        if entry.get("filename") == archive.filename:
            listed = entry.get("digests", {}).get("sha256")
            if listed != archive.sha256:
                raise FetchError(f"the index lists {archive.filename} with sha256 {listed}, not "
                                 f"the pinned {archive.sha256}; refusing it",
                                 file=archive.filename, expected=archive.sha256, got=listed)
            # The index may give a relative address; it is relative to the description.
            return urllib.parse.urljoin(meta_url, str(entry["url"]))
    raise FetchError(f"release {archive.name} {archive.version} has no file {archive.filename}",
                     file=archive.filename)


def fetch(archive: Archive, cache: Path) -> Path:
    """The verified local copy of `archive`, downloading it into `cache/archives` if needed.

    Raises:
        FetchError: it cannot be downloaded, or its bytes do not match the pin.
    """
    folder = cache / "archives"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / archive.filename
    if not path.exists():
        data = _read(_file_url(archive))
        got = hashlib.sha256(data).hexdigest()
        if got != archive.sha256:
            raise FetchError(f"{archive.filename}: downloaded sha256 {got} does not match the "
                             f"pinned {archive.sha256}", file=archive.filename,
                             expected=archive.sha256, got=got)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    got = sha256_of(path)
    if got != archive.sha256:
        raise FetchError(f"the cached {path} has sha256 {got}, not the pinned {archive.sha256}; "
                         "delete it and build again", file=str(path), expected=archive.sha256,
                         got=got)
    return path


def _inside(dest: Path, name: str) -> Path:
    target = (dest / name).resolve()
    if target != dest and dest not in target.parents:
        raise FetchError(f"archive member {name!r} would land outside {dest}; refusing it",
                         member=name)
    return target


def unpack(path: Path, dest: Path, *, strip_top: bool) -> Path:
    """Unpack a .tar.gz or a wheel into `dest` (replaced if present) and return `dest`.

    `strip_top`: an sdist holds one top folder (`name-version/`); its content becomes `dest`.
    """
    dest = dest.resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-"))
    try:
        if path.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(path) as zf:
                for name in zf.namelist():
                    _inside(work, name)
                zf.extractall(work)
        else:
            with tarfile.open(path) as tf:
                for member in tf.getmembers():
                    _inside(work, member.name)
                tf.extractall(work, filter="data")
        root = work
        if strip_top:
            tops = list(work.iterdir())
            if len(tops) != 1 or not tops[0].is_dir():
                raise FetchError(f"{path.name} does not hold exactly one top folder",
                                 file=path.name)
            root = tops[0]
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(root, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest
