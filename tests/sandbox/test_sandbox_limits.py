"""Resource limits: the spec round-trips, and the limit stage really lowers the rlimits."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.runtime.limits import ResourceLimits, stage_argv, stage_source

positive = st.integers(min_value=1, max_value=2**40)


@given(positive, positive, positive, positive, positive)
def test_spec_round_trips(cpu, mem, nproc, nofile, fsize):
    limits = ResourceLimits(cpu, mem, nproc, nofile, fsize)
    assert ResourceLimits.from_spec(limits.to_spec()) == limits


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "3"])
def test_non_positive_or_non_integer_limits_are_rejected(value):
    with pytest.raises(ValueError, match="positive integer"):
        ResourceLimits(cpu_seconds=value)


@pytest.mark.parametrize("spec", ["cpu=1", "cpu_seconds", "cpu_seconds=x", "bogus=3"])
def test_malformed_spec_is_rejected(spec):
    with pytest.raises(ValueError):
        ResourceLimits.from_spec(spec)


def _run_stage(limits: ResourceLimits, *args: str) -> subprocess.CompletedProcess[str]:
    # A real child interpreter, outside any sandbox: the stage works on its own.
    return subprocess.run(
        [sys.executable, "-S", *stage_argv(limits, list(args))],
        capture_output=True, text=True, timeout=60,
    )


def test_stage_applies_limits_then_runs_code():
    limits = ResourceLimits(cpu_seconds=7, address_space_bytes=700 << 20, processes=50,
                            open_files=77, file_size_bytes=3 << 20)
    code = ("import json, resource, sys\nprint(json.dumps([sys.argv[1:], [resource.getrlimit(getattr("
            "resource, n)) for n in ('RLIMIT_CPU','RLIMIT_AS','RLIMIT_NPROC','RLIMIT_NOFILE',"
            "'RLIMIT_FSIZE')]]))")
    proc = _run_stage(limits, "-c", code, "a", "b")
    assert proc.returncode == 0, proc.stderr
    argv, got = json.loads(proc.stdout)
    assert argv == ["a", "b"]
    assert got == [[7, 8], [700 << 20] * 2, [50, 50], [77, 77], [3 << 20] * 2]


def test_stage_runs_a_module_with_its_arguments():
    proc = _run_stage(ResourceLimits(), "-m", "json.tool", "--help")
    assert proc.returncode == 0 and "json.tool" in proc.stdout


def test_stage_runs_a_path(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint(sys.argv[1:])\n")
    proc = _run_stage(ResourceLimits(), str(script), "x")
    assert proc.stdout.strip() == "['x']"


def test_stage_never_raises_an_existing_hard_limit():
    code = "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))"
    outer = subprocess.run(
        [sys.executable, "-c",
         "import resource, subprocess, sys\n"
         "resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))\n"
         "subprocess.run([sys.executable, '-S', '-c', sys.argv[1], '-c', sys.argv[2]])",
         stage_source(ResourceLimits(open_files=500)), code],
        capture_output=True, text=True, timeout=60,
    )
    assert outer.stdout.strip() == "(40, 40)", outer.stderr


@pytest.mark.parametrize("args", [[], ["-m"], ["-c"]])
def test_stage_usage_errors(args):
    proc = _run_stage(ResourceLimits(), *args)
    assert proc.returncode != 0 and "limit stage: expected" in proc.stderr


def test_stage_imports_nothing_of_frostline():
    code = "import sys\nprint(sorted(m for m in sys.modules if m.startswith('frostline')))"
    proc = _run_stage(ResourceLimits(), "-c", code)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_file_size_limit_gives_an_error_not_a_silent_death(tmp_path):
    target = tmp_path / "big"
    code = (f"f = open({str(target)!r}, 'wb')\ntry:\n    f.write(b'x' * 5000); f.flush()\n"
            "except OSError as e:\n    print(e.errno)\n")
    proc = _run_stage(ResourceLimits(file_size_bytes=1024), "-c", code)
    assert proc.stdout.strip() == "27"  # EFBIG


def test_host_process_limits_untouched():
    # Applying limits happens only in the child: the test process keeps its own.
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    _run_stage(ResourceLimits(open_files=20), "-c", "pass")
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before
