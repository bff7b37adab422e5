"""Issue 30: the bench's Table VII under `rebind` admits the wraps and computed payloads and
still stops literal payload edits and deletions, paying no duplicate; the refactoring
generator finds no duplicate and no stale result (a few scripts, so the test stays short)."""

from __future__ import annotations

from bench.paper.common import Lab
from bench.rebind import choose, demo_figures, generator, table_vii
from frostline.testing import InProcessRunner


def rows_of(text: str) -> dict[str, list[str]]:
    return {line[:29].strip(): line[29:].split() for line in text.splitlines()[3:]
            if line and not line.startswith(" ")}


def test_issue30_table_vii_under_rebind_admits_moves_and_stops_payload_edits():
    with Lab() as lab:
        out = table_vii(choose(3), lab, InProcessRunner())
    rows = rows_of(out)
    # applied, accepted (stop), accepted (rebind), paid by rebind, duplicates, failed after
    assert rows["computed payload"] == ["3", "0", "3", "0", "0", "0"]
    assert rows["wrap in a new block"][:3] == ["3", "0", "3"]
    assert rows["literal in payload"][1:3] == ["0", "0"]
    assert rows["delete a call"][1:3] == ["0", "0"]
    assert rows["total"][4] == "0"


def test_issue30_generator_figures_have_no_duplicate_and_no_stale_result():
    with Lab() as lab:
        out = generator(choose(4), lab, 40)
    header, _, values = out.splitlines()[1:4]
    figures = dict(zip(header.split(), values.split(), strict=True))
    assert int(figures["cases"]) > 0 and int(figures["succeeded"]) > 0
    assert figures["duplicates"] == "0" and figures["stale"] == "0"


def test_issue30_demo_figures_stop_pays_a_rewrite_rebind_does_not():
    with Lab() as lab:
        out = demo_figures(lab, InProcessRunner())
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[3:]}
    assert rows["stop"] == ["gate_stopped", "0", "0", "2"]
    assert rows["rebind"] == ["succeeded", "4", "1", "1"]


def test_issue30_e2b_a425_relocation_succeeds_under_rebind_with_no_duplicate():
    from bench.rebind import e2b

    rows = {(line.split()[0], line.split()[1]): line.split()[2:]
            for line in e2b().splitlines()[3:]}
    assert rows[("a425", "stop")][:3] == ["gate_stopped", "0", "0"]
    assert rows[("a425", "rebind")] == ["succeeded", "3", "1", "5", "0", "0"]
    assert all(r[4] == "0" for r in rows.values())  # no duplicate under either policy
