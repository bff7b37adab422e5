"""R00: bad input is a violation with a clear message, never a traceback and never a hang."""

from __future__ import annotations

import pytest

from frostline.script import check, check_bytes
from frostline.script.source import MAX_AST_DEPTH, MAX_SOURCE_BYTES

OK = 'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {})\n'


def _only_r00(report) -> str:  # type: ignore[no-untyped-def]
    assert not report.valid
    assert [v.rule for v in report.violations] == ["R00"]
    v = report.violations[0]
    assert v.severity == "error" and v.message and v.hint
    return str(v.message)


def test_valid_source_has_no_r00() -> None:
    assert check(OK).valid


@pytest.mark.parametrize("src", ["", "   \n\n\t\n", "# only a comment\n"])
def test_empty_script(src: str) -> None:
    msg = _only_r00(check(src))
    assert "empty" in msg or "orchestrate" in msg or "parse" in msg


def test_syntax_error_reports_position() -> None:
    report = check("async def orchestrate(ctx, args):\n    x = (1,\n")
    msg = _only_r00(report)
    assert "does not parse" in msg
    assert report.violations[0].line >= 2


def test_non_utf8_bytes() -> None:
    msg = _only_r00(check_bytes(b"async def orchestrate(ctx, args):\n    x = '\xff\xfe'\n"))
    assert "UTF-8" in msg
    assert check_bytes(b"\xef\xbb\xbf" + OK.encode()).valid  # a BOM is fine
    assert check_bytes(OK.encode()).valid


def test_nul_byte() -> None:
    assert "NUL" in _only_r00(check(OK.replace("return", "return \0")))
    assert not check_bytes(OK.encode() + b"\0").valid


def test_lone_surrogate() -> None:
    assert "surrogate" in _only_r00(check(OK + "# \ud800\n"))


def test_ten_megabyte_file() -> None:
    big = OK + "# " + "x" * (10 * 1024 * 1024) + "\n"
    assert "size limit" in _only_r00(check(big))
    assert "limit" in _only_r00(check_bytes(big.encode()))


def test_size_cap_counts_utf8_bytes() -> None:
    # Under the cap in characters, over it in bytes.
    text = OK + "# " + "é" * (MAX_SOURCE_BYTES // 2 + 10) + "\n"
    assert len(text) < MAX_SOURCE_BYTES
    assert "size limit" in _only_r00(check(text))


def test_ten_thousand_nested_parentheses() -> None:
    src = "async def orchestrate(ctx, args):\n    x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n"
    _only_r00(check(src))


def test_five_thousand_level_nested_list() -> None:
    src = "async def orchestrate(ctx, args):\n    x = " + "[" * 5000 + "]" * 5000 + "\n"
    _only_r00(check(src))


@pytest.mark.parametrize("expr", [
    "-" * 100_000 + "1",
    "not " * 50_000 + "x",
    "+".join(["1"] * 50_000),
    "a" + ".b" * 20_000,
    "f" + "()" * 20_000,
    "1 if c else " * 20_000 + "1",
])
def test_parser_recursion_and_memory_guards(expr: str) -> None:
    _only_r00(check("async def orchestrate(ctx, args):\n    x = " + expr + "\n"))


def test_deep_but_parseable_expression_is_bounded_by_the_checker() -> None:
    # The parser accepts this; the checker's own depth bound rejects it before recursing.
    depth = MAX_AST_DEPTH + 20
    src = "async def orchestrate(ctx, args):\n    x = " + "+".join(["1"] * depth) + "\n"
    msg = _only_r00(check(src))
    assert "nests deeper" in msg


def test_deep_nesting_in_a_part_the_walk_skips_is_still_bounded() -> None:
    depth = MAX_AST_DEPTH + 20
    src = ("class C:\n    x = " + "+".join(["1"] * depth) + "\n" + OK)
    assert not check(src).valid


def test_deep_indentation() -> None:
    body = "".join("    " * (i + 1) + "if args:\n" for i in range(120))
    src = "async def orchestrate(ctx, args):\n" + body + "    " * 121 + "pass\n"
    _only_r00(check(src))


def test_non_text_input() -> None:
    _only_r00(check(b"bytes are not str"))  # type: ignore[arg-type]


def test_scripts_are_parsed_one_at_a_time_across_threads(monkeypatch) -> None:
    """CPython 3.11's AST constructor keeps its recursion depth in state every thread shares,
    so concurrent parses can fail with a SystemError (python/cpython#106905); the API checks
    scripts on a thread pool, so parse_source serializes them."""
    import ast
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from frostline.script.source import parse_source

    real_parse, active, most = ast.parse, [0], [0]
    guard = threading.Lock()

    def parse(*args, **kwargs):  # type: ignore[no-untyped-def]
        with guard:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.005)  # wide enough for another thread to enter, were it allowed
        try:
            return real_parse(*args, **kwargs)
        finally:
            with guard:
                active[0] -= 1

    monkeypatch.setattr(ast, "parse", parse)
    script = "async def orchestrate(ctx, args):\n    return 1\n"
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(lambda _: parse_source(script), range(32)))
    assert len(trees) == 32 and most[0] == 1
