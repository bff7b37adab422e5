"""The pinned packages a task population is built from, and what each needs to run its tests.

Every archive is pinned by version and SHA-256: the build downloads exactly these bytes or
stops. Source distributions carry the test suites (wheels do not); a test dependency that is not
part of frostline's own environment is pinned as a pure-Python wheel and put on the sandbox's
`sys.path` next to the package (never installed).

Per package: `import_root` is the directory put first on `sys.path` (`src` for a src layout),
`mutate` the source paths mutants are drawn from, `exclude` the paths among them that are tests
or not shipped code, `test_paths` what pytest collects, `test_args` the extra arguments the
suite needs to run green offline in the sandbox. Each `--deselect` there names a test that
fails in the sandbox for a reason of the sandbox (no subprocess, no network) or of this
interpreter, never of the package; the reasons are in the comments.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEPS", "PACKAGES", "Archive", "PackageSpec", "spec_of"]


@dataclass(frozen=True)
class Archive:
    """One pinned file on the package index: `name` and `version` select it, `filename` and
    `sha256` identify it."""

    name: str
    version: str
    filename: str
    sha256: str


@dataclass(frozen=True)
class PackageSpec:
    """A package whose suite becomes tasks (see the module docstring for the fields)."""

    archive: Archive
    import_root: str
    mutate: tuple[str, ...]
    test_paths: tuple[str, ...]
    test_args: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.archive.name

    @property
    def version(self) -> str:
        return self.archive.version


def _sdist(name: str, version: str, filename: str, sha256: str) -> Archive:
    return Archive(name, version, filename, sha256)


# Pure-Python wheels of test dependencies frostline's environment does not carry.
DEPS: dict[str, Archive] = {a.name: a for a in (
    Archive("whatever", "0.7", "whatever-0.7-py3-none-any.whl",
            "4a862efbb11a88e9b162e88a59a5eb8b1e656df6c39c6e818f7902bf1d27d728"),
    Archive("freezegun", "1.5.5", "freezegun-1.5.5-py3-none-any.whl",
            "cd557f4a75cf074e84bc374249b9dd491eaeacd61376b9eb3c423282211619d2"),
    Archive("pytz", "2026.6", "pytz-2026.6-py2.py3-none-any.whl",
            "7fed3fee8fd6bd4a2b7b75a8d56021d0624127bf69bd5691f115db929ac570b3"),
    Archive("text-unidecode", "1.3", "text_unidecode-1.3-py2.py3-none-any.whl",
            "1311f10e8b895935241623731c2ba64f4c455287888b18189350b67134a822e8"),
)}

# Every run passes `-o addopts=`: the packages' own addopts ask for coverage plugins, colours
# and doctest globs that are not part of the sandbox; what a suite needs is listed here instead.
PACKAGES: dict[str, PackageSpec] = {s.name: s for s in (
    PackageSpec(
        _sdist("toolz", "1.2.0", "toolz-1.2.0.tar.gz",
               "9667a038e9d6ecba37995e26cb2f59ec6420b6ad8dd9677de59db9b956b08490"),
        import_root=".", mutate=("toolz",), test_paths=("toolz/tests",),
        exclude=("toolz/tests", "toolz/sandbox", "toolz/curried")),
    PackageSpec(
        _sdist("humanize", "4.17.0", "humanize-4.17.0.tar.gz",
               "1d6a36c453dbfbb3f0b34601d2e0b4ce5d48d780305cd45714843f0068fde6ac"),
        import_root="src", mutate=("src/humanize",), test_paths=("tests",),
        # the benchmarks need pytest-codspeed, a timing plugin, not a test of behaviour
        # the benchmarks need pytest-codspeed, a timing plugin, not a test of behaviour; the
        # translation update runs gettext's programs as subprocesses, which the sandbox denies
        test_args=("--ignore=tests/test_benchmarks.py",
                   "--deselect=tests/test_i18n.py::test_update_translations"),
        deps=("freezegun",)),
    PackageSpec(
        _sdist("inflection", "0.5.1", "inflection-0.5.1.tar.gz",
               "1a29730d366e996aaacffb2f1f1cb9593dc38e2ddd30c91250c6dde09ea9b417"),
        import_root=".", mutate=("inflection",), test_paths=("test_inflection.py",)),
    PackageSpec(
        _sdist("semver", "3.1.2", "semver-3.1.2.tar.gz",
               "bea193552413194252d33ff26ce0962b76669bd1c6fb17e8e203ac37f072feaf"),
        import_root="src", mutate=("src/semver",), test_paths=("tests",),
        # the command-line tests start `pysemver` as a subprocess; the sandbox has none
        test_args=("--ignore=tests/test_pysemver-cli.py",)),
    PackageSpec(
        _sdist("cachetools", "8.0.2", "cachetools-8.0.2.tar.gz",
               "30ac523adfc118b51d2b2e7bad8a0ddb31370dfe2700c7f10ca224f36ccf81e0"),
        import_root="src", mutate=("src/cachetools",), test_paths=("tests",)),
    PackageSpec(
        _sdist("python-slugify", "9.2.0", "python_slugify-9.2.0.tar.gz",
               "cee32948083476013804de1667724fb1362dacb71e47b1d5d92adf8db6ee3298"),
        import_root=".", mutate=("slugify",), test_paths=("tests",),
        # these three start the command line as a subprocess
        test_args=(
            "--deselect=tests/test_release.py::ReleaseRegressionTests::test_algorithm_cli",
            "--deselect=tests/test_release.py::ReleaseRegressionTests"
            "::test_cli_forwarding_and_real_module",
            "--deselect=tests/test_release.py::UppercaseHexReferenceTests"
            "::test_uppercase_reference_through_cli"),
        exclude=("slugify/__main__.py",), deps=("text-unidecode",)),
    PackageSpec(
        _sdist("parse", "1.22.4", "parse-1.22.4.tar.gz",
               "706d458feed5a81b02768d3156e8070baf6cee7d150a3a3c0cd43101a875c3b5"),
        import_root=".", mutate=("parse",), test_paths=("tests",)),
    PackageSpec(
        _sdist("boltons", "26.2.0", "boltons-26.2.0.tar.gz",
               "d39cfd15c1a1c3bd4d705c82252fa9edb8e4f5e8cc039f8e39afac7b1b47e92c"),
        # these two open TCP sockets; the sandbox has no network (`--ignore` does not work
        # here: the suite's conftest answers pytest_ignore_collect for every path)
        import_root=".", mutate=("boltons",), test_paths=("tests",),
        test_args=("--deselect=tests/test_socketutils.py::test_socketutils_netstring",
                   "--deselect=tests/test_socketutils.py::test_socketutils_netstring_timeout")),
    PackageSpec(
        _sdist("tabulate", "0.10.0", "tabulate-0.10.0.tar.gz",
               "e2cfde8f79420f6deeffdeda9aaec3b6bc5abce947655d17ac662b126e48a60d"),
        # the command-line tests start the script as a subprocess
        import_root=".", mutate=("tabulate",), test_paths=("test",),
        test_args=("--ignore=test/test_cli.py",)),
    PackageSpec(
        _sdist("funcy", "2.1", "funcy-2.1.tar.gz",
               "8979feb3de7120afd1d00e5a8eae810c1942e4bfbc91697151e9ee1e49f79284"),
        import_root=".", mutate=("funcy",), test_paths=("tests",), deps=("whatever",)),
    PackageSpec(
        _sdist("iso8601", "2.1.0", "iso8601-2.1.0.tar.gz",
               "6b1d3829ee8921c4301998c909f7829fa9ed3cbdac0d3b16af2d743aed1ba8df"),
        import_root=".", mutate=("iso8601",), test_paths=("iso8601/test_iso8601.py",),
        exclude=("iso8601/test_iso8601.py",), deps=("pytz",)),
    # The sealed held-out packages (heldout.py), pinned after the split was sealed. asttokens
    # has no pin here: its suite imports astroid, and with astroid it runs past 300 s.
    PackageSpec(
        _sdist("decorator", "5.3.2", "decorator-5.3.2.tar.gz",
               "d9883f1b8259e3bfc42565d0bc6fdc760012008552aa449f75efd2d48319b82b"),
        # the suite is one module named test.py, which pytest collects only when named
        import_root="src", mutate=("src/decorator",), test_paths=("tests/test.py",)),
    PackageSpec(
        # 0.7.0's suite needs hypothesmith (which needs libcst, compiled); 0.6.1's does not
        _sdist("mccabe", "0.6.1", "mccabe-0.6.1.tar.gz",
               "dd8d182285a0fe56bace7f45b5e7d1a6ebcbf524e8f3bd87eb0f125271b8831f"),
        import_root=".", mutate=("mccabe.py",), test_paths=("test_mccabe.py",)),
    PackageSpec(
        _sdist("more-itertools", "11.2.1", "more_itertools-11.2.1.tar.gz",
               "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63"),
        import_root=".", mutate=("more_itertools",), test_paths=("tests",)),
    PackageSpec(
        _sdist("pyflakes", "4.1.0", "pyflakes-4.1.0.tar.gz",
               "592beb57058eb82eb190fb7514f2081c555c51000b029ff71286a681e6cf2f83"),
        # these run pyflakes as a subprocess (TestMain is a subclass); the sandbox has none
        import_root=".", mutate=("pyflakes",), test_paths=("pyflakes/test",),
        test_args=("--deselect=pyflakes/test/test_api.py::IntegrationTests",
                   "--deselect=pyflakes/test/test_api.py::TestMain"),
        exclude=("pyflakes/test",)),
    PackageSpec(
        _sdist("xmltodict", "1.0.4", "xmltodict-1.0.4.tar.gz",
               "6d94c9f834dd9e44514162799d344d815a3a4faec913717a9ecbfa5be1bb8e61"),
        import_root=".", mutate=("xmltodict.py",), test_paths=("tests",)),
)}


def spec_of(name: str) -> PackageSpec:
    """The pinned spec of `name`; KeyError names the known packages."""
    try:
        return PACKAGES[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a pinned package; pinned: {', '.join(PACKAGES)}") from None
