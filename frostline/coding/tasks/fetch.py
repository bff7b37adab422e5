"""Download pinned archives from the package index, verify them, and unpack them safely.

An archive is fetched once into a cache outside any repository (`default_cache`), written
atomically, and checked against its pinned SHA-256 every time it is used, so a cached file that
was altered is refused like a download that was. Unpacking refuses members that would land
outside the destination (absolute paths, `..`, links out), whatever the archive claims.

Cache location: ``--cache DIR`` > ``$FROSTLINE_CACHE`` > ``$XDG_CACHE_HOME/frostline`` >
``~/.cache/frostline``. Index: ``$FROSTLINE_INDEX_URL`` (the JSON API's base, default PyPI).
"""

from __future__ import annotations

import copy
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
from typing import Any

from frostline.coding.tasks.errors import FetchError
from frostline.coding.tasks.pins import Archive

__all__ = ["INDEX_ENV", "default_cache", "describe", "extract_tar", "fetch", "sha256_of",
           "unpack"]

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


def _index_url(name: str) -> str:
    base = os.environ.get(INDEX_ENV) or _DEFAULT_INDEX
    # The project's description (its `releases` list every version's files): release-level
    # descriptions are not served by every mirror of the index.
    return urllib.parse.urljoin(base.rstrip("/") + "/", f"{name}/json")


def _read(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            data: bytes = response.read()
            return data
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"cannot download {url}: {reason}; check the network or set "
                         f"${INDEX_ENV}", url=url) from exc


def describe(name: str) -> dict[str, list[dict[str, Any]]]:
    """The `releases` of the index's JSON description of `name` (version → files, each with
    `filename`, `url` made absolute, `digests`, `packagetype`, `yanked`).

    Raises:
        FetchError: the index cannot be read or does not describe `name`.
    """
    url = _index_url(name)
    try:
        releases = json.loads(_read(url))["releases"]
        return {str(v): [{**f, "url": urllib.parse.urljoin(url, str(f["url"]))} for f in files]
                for v, files in releases.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FetchError(f"the index's description {url} lists no releases of {name}; check "
                         f"the name or ${INDEX_ENV}", url=url) from exc


def _file_url(archive: Archive) -> str:
    """The download address of `archive`, from the index's JSON description of its release."""
    meta_url = _index_url(archive.name)
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


def extract_tar(tf: tarfile.TarFile, dest: Path, *, native: bool | None = None) -> None:
    """Extract `tf` into `dest` under the rules of tarfile's ``"data"`` filter: nothing outside
    `dest` (names, links), no device or FIFO, no setuid/setgid/sticky bit, no group- or
    other-writable file, no owner from the archive.

    `native`: use tarfile's own filter (default: when this Python has it, 3.11.4 and later);
    otherwise each member is checked here (`_data_member`) and extracted one by one, so a
    link extracted earlier is followed when a later member is checked (Debian 12's 3.11.2).

    Raises:
        FetchError: a member breaks a rule; what was extracted stays in `dest` (the caller
            unpacks into a scratch folder).
    """
    if native is None:
        native = hasattr(tarfile, "data_filter")
    if native:
        try:
            tf.extractall(dest, filter="data")
        except tarfile.FilterError as exc:
            name = exc.tarinfo.name
            raise FetchError(f"archive member {name!r} is refused: {exc}",
                             member=name) from exc
        return
    # Checked here already; a Python that has filters is told so (3.12+ warns without one).
    trusted = hasattr(tarfile, "fully_trusted_filter")
    for member in tf.getmembers():
        safe = _data_member(member, dest)
        if trusted:
            tf.extract(safe, dest, numeric_owner=True, filter="fully_trusted")
        else:
            tf.extract(safe, dest, numeric_owner=True)


def _data_member(member: tarfile.TarInfo, dest: Path) -> tarfile.TarInfo:
    """A copy of `member` that is safe to extract into `dest`, or FetchError (the checks of
    tarfile's ``"data"`` filter, for Pythons that lack it)."""
    name = member.name
    _inside(dest, name)
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise FetchError(f"archive member {name!r} is a device or a FIFO; refusing it",
                         member=name)
    if member.issym():
        if os.path.isabs(member.linkname):
            raise FetchError(f"archive member {name!r} links to the absolute path "
                             f"{member.linkname!r}; refusing it", member=name)
        _inside(dest, os.path.join(os.path.dirname(name), member.linkname))
    elif member.islnk():
        _inside(dest, member.linkname)
    mode = member.mode & 0o755  # no setuid/setgid/sticky, no group or other write
    if member.isdir():
        mode |= 0o700
    elif member.isreg() or member.islnk():
        mode |= 0o600
        if not mode & 0o100:  # not executable by its owner: by nobody
            mode &= ~0o111
    safe = copy.copy(member)  # TarInfo.replace is 3.11.4's too
    safe.mode, safe.uid, safe.gid, safe.uname, safe.gname = (mode, os.getuid(), os.getgid(),
                                                             "", "")
    return safe


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
                extract_tar(tf, work)
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
