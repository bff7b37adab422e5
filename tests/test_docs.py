"""The docs a newcomer follows (issue 27 §3), held to the code so they cannot go stale: the
index lists every page and every link resolves; every script of docs/writing-scripts.md is
checked (a rejected one by the rule it names, its fix and every other script accepted); no
page or --help text cites a document that is not in the repository; and the facts that went
stale once (the catalog's size, the MCP tools, the replay spelling, the install line) are
compared with the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.capabilities.catalog import DEFAULT_CATALOG
from frostline.script.checker import check

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _blocks(text: str) -> list[tuple[str, str, int]]:
    """(info string, body, line) of every fenced code block."""
    found = []
    for m in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.S | re.M):
        found.append((m.group(1).strip(), m.group(2), text[: m.start()].count("\n") + 1))
    return found


# --------------------------------------------------------------------------------- the index
def test_issue27_the_index_lists_every_docs_page():
    index = _text(DOCS / "README.md")
    listed = {target for target in LINK.findall(index)}
    missing = [p.name for p in PAGES if p.name != "README.md" and p.name not in listed]
    assert missing == [], f"docs/README.md does not list {missing}: add a line for each"


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_issue27_every_link_resolves(page):
    text = _text(page)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not ours to resolve
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        assert path.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor and path.suffix == ".md":
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                     for h in re.findall(r"^#+ (.+)$", _text(path), re.M)}
            assert anchor in slugs, f"{page.name} links to {target}: no such heading"


def test_issue27_the_readme_is_a_front_door():
    text = _text(ROOT / "README.md")
    assert len(text.splitlines()) <= 220
    for must in ("pip install -e . && frostline demo", ".ci/run", "## A short tour",
                 "docs/README.md", "docs/writing-scripts.md"):
        assert must in text


# ------------------------------------------------------------------------ writing scripts
def _scripts() -> list[tuple[str, str, int]]:
    return [(info, body, line) for info, body, line in _blocks(_text(DOCS / "writing-scripts.md"))
            if info.startswith("python") and "def orchestrate" in body]


def test_issue27_writing_scripts_rejects_each_rule_and_accepts_each_fix():
    rejected = {}
    for info, body, line in _scripts():
        report = check(body)
        fired = {v.rule for v in report.violations if v.severity == "error"}
        words = info.split()
        if len(words) >= 3 and words[1] == "rejected":
            rule = words[2]
            assert not report.valid and rule in fired, (
                f"writing-scripts.md line {line}: expected {rule}, got {sorted(fired)}")
            rejected[rule] = line
        else:
            assert report.valid, (f"writing-scripts.md line {line} must pass the checker: "
                                  f"{[(v.rule, v.message) for v in report.violations]}")
    assert sorted(rejected) == [f"R{i:02d}" for i in range(13)]


def test_issue27_each_rejected_script_is_followed_by_its_fix():
    kinds = [info.split()[1] if len(info.split()) > 1 else "example"
             for info, _, _ in _scripts()]
    for i, kind in enumerate(kinds):
        if kind == "rejected":
            assert kinds[i + 1] == "fixed", f"script {i}: a rejected example needs its fix next"


# ------------------------------------------------------------------------------ citations
PAPER = "Call-Level Revision Contracts for LLM-Authored Workflows"
SPEC = "Build Spec 23"
# Documents that are not in the repository, cited as if they were.
BAD_CITATIONS = re.compile(r"\bseed 0\d\d\b|\bseed_0\d\d|\bDESIGN(?:\.md)? ?§|\bDESIGN\.md\b",
                           re.I)


def _help_texts() -> dict[str, str]:
    import click

    from frostline.cli import main

    texts: dict[str, str] = {}

    def walk(cmd: click.Command, path: list[str]) -> None:
        texts[" ".join(path)] = CliRunner().invoke(main, [*path[1:], "--help"]).output
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name])

    walk(main, ["frostline"])
    return texts


def _documents() -> dict[str, str]:
    return {p.name if p.parent == DOCS else p.relative_to(ROOT).as_posix(): _text(p)
            for p in [ROOT / "README.md", *PAGES]}


def test_issue27_no_citation_of_a_document_outside_the_repository():
    found = [(where, m.group(0)) for where, text in {**_documents(), **_help_texts()}.items()
             for m in BAD_CITATIONS.finditer(text)]
    assert found == [], ("cite the paper or the build spec by title (docs/background.md), "
                         f"or drop the reference: {found}")


def test_issue27_section_and_table_numbers_name_their_document():
    """A page that cites "§8.3" or "Table VII" names the document they belong to."""
    for where, text in {**_documents(), **_help_texts()}.items():
        if re.search(r"§\s?\d", text):
            assert SPEC in text or PAPER in text, f"{where} cites a § without its document"
        if re.search(r"\bTable [IVX]+\b|\bE2b\b", text):
            assert PAPER in text or "the paper" in text, f"{where} cites a table of no paper"


def _sources() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): _text(p)
            for folder in ("frostline", "bench") for p in sorted((ROOT / folder).rglob("*.py"))}


def test_issue28_the_code_cites_no_document_outside_the_repository():
    found = [(where, m.group(0)) for where, text in _sources().items()
             for m in BAD_CITATIONS.finditer(text)]
    assert found == [], ("cite the paper or the build spec by title (docs/background.md), "
                         f"or a page of docs/: {found}")


GREEK = re.compile(r"[\u0370-\u03ff]")
RESULT = re.compile(r"\b(?:Lemma|Proposition|Theorem|Corollary|Definition) \d+\b")


def _glossary_entries() -> set[str]:
    text = _text(DOCS / "architecture.md")
    section = re.search(r"^## Glossary[^\n]*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "docs/architecture.md lost its glossary section"
    entries = set()
    for cell in re.findall(r"^\| ([^|]+?) \|", section.group(1), re.M):
        entries.add(cell)
        entries.update(RESULT.findall(cell))
    return entries


def test_issue28_every_symbol_and_result_the_code_cites_is_in_the_glossary():
    """σ, π, ω, ι and the paper's numbered results, wherever frostline/ uses them, have an
    entry in the glossary of docs/architecture.md."""
    cited: dict[str, str] = {}
    for where, text in _sources().items():
        if not where.startswith("frostline/"):
            continue
        for term in [*GREEK.findall(text), *RESULT.findall(text)]:
            cited.setdefault(term, where)
    assert {"σ", "π", "ω", "ι", "Lemma 1"} <= set(cited)  # the scan sees what it should
    entries = _glossary_entries()
    missing = {term: where for term, where in cited.items() if term not in entries}
    assert missing == {}, f"define these in the glossary of docs/architecture.md: {missing}"


def test_issue27_background_names_both_documents():
    text = _text(DOCS / "background.md")
    assert PAPER in text and "arXiv:2611.06967" in text
    assert "Build Spec 23 — Workflow / State Machine" in text


# ---------------------------------------------------------------------------- stale facts
_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
     "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"])}


def test_issue27_providers_md_states_the_catalog_s_size_and_every_built_in():
    text = _text(DOCS / "providers.md")
    said = re.search(r"the catalog is the (\w+) built-in entries", text)
    assert said is not None, "providers.md no longer says how many built-in entries there are"
    assert _NUMBERS.get(said.group(1), said.group(1)) == len(DEFAULT_CATALOG.names())
    local = text.split("## Local providers", 1)[1].split("\n## ", 1)[0]
    missing = [n for n in DEFAULT_CATALOG.names() if f"`{n}`" not in local]
    assert missing == [], f"the local providers' table of providers.md omits {missing}"


def test_issue27_mcp_help_and_docs_list_the_tools_the_server_serves():
    pytest.importorskip("mcp")
    from frostline.embedded import open_capabilities
    from frostline.mcp.server import tools

    registry = open_capabilities()
    try:
        served = {t.name for t in tools(registry)}
    finally:
        registry.close()
    helped = CliRunner().invoke(
        __import__("frostline.cli.mcp", fromlist=["mcp"]).mcp, ["--help"]).output
    listed = re.search(r"The tools: ([^.]+)\.", " ".join(helped.split()))
    assert listed is not None, helped
    assert {t.strip() for t in listed.group(1).split(",")} == served
    page = _text(DOCS / "mcp.md")
    assert [t for t in sorted(served) if f"`{t}`" not in page] == []


def test_issue27_stored_replies_are_spelled_replay_everywhere():
    from frostline.repair.replay import REPLAY_KINDS

    assert REPLAY_KINDS[0] == "replay"
    for where, text in {**_documents(), **_help_texts()}.items():
        for line in " ".join(text.split("\n")).split(". "):
            if re.search(r"\brecorded:[\w./$]", line):
                assert "older spelling" in line, (
                    f"{where} spells a stored-replies model 'recorded:'; write 'replay:' "
                    f"({line.strip()[:120]})")
    assert "--model replay:" in _text(ROOT / "README.md")


def test_issue27_install_lines_work_from_the_checkout():
    """frostline is installed from its checkout (`pip install -e '.[extra]'`): a line that
    installs `frostline[extra]` from an index names a package the index does not serve."""
    for where, text in _documents().items():
        for m in re.finditer(r"pip install [^\n`]*", text):
            assert not re.search(r"""pip install ['"]?frostline\b""", m.group(0)), (
                f"{where}: {m.group(0)!r}; from the checkout write pip install -e '.[EXTRA]'")


def test_issue27_configuration_md_names_every_command_that_takes_config():
    from frostline.cli import main

    taking = set()
    for name, cmd in _commands(main).items():
        if any("--config" in getattr(p, "opts", []) for p in cmd.params):
            taking.add(name)
    text = " ".join(_text(DOCS / "configuration.md").split())
    said = text.split("Every command that reads the capability catalog takes `--config FILE`", 1)
    assert len(said) == 2
    named = set(re.findall(r"`([a-z][a-z ]*)`", said[1].split(". ", 1)[0]))
    assert named == taking, (sorted(taking - named), sorted(named - taking))


def _commands(group) -> dict[str, object]:
    import click

    found: dict[str, object] = {}
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            found[name] = cmd
            found.update({f"{name} {k}": v for k, v in _commands(cmd).items()})
        elif cmd is not None:
            found[name] = cmd
    return found
