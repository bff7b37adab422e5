"""extract_code: the candidate script inside a model reply."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.repair.extract import extract_code, fenced_blocks

SCRIPT = 'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {"x": 1})\n'


def test_python_fence_with_prose():
    reply = f"Here is the repaired script:\n\n```python\n{SCRIPT}```\n\nIt keeps every call."
    assert extract_code(reply) == SCRIPT


@pytest.mark.parametrize("opener", ["```python", "```py", "```Python3", "```", "~~~python",
                                    "~~~", "````python", "```python title=x"])
def test_fence_variants(opener):
    closer = opener[0] * (len(opener) - len(opener.lstrip(opener[0])))
    assert extract_code(f"text\n{opener}\n{SCRIPT}{closer}\nmore") == SCRIPT


def test_crlf_reply():
    reply = f"Fix:\r\n```python\r\n{SCRIPT.replace(chr(10), chr(13) + chr(10))}```\r\n"
    assert extract_code(reply) == SCRIPT


def test_unclosed_fence_runs_to_the_end():
    assert extract_code(f"Sure.\n```python\n{SCRIPT}") == SCRIPT


def test_prefers_the_block_defining_orchestrate_over_a_longer_one():
    helper = "def helper(x):\n" + "    x = x + 1\n" * 20 + "    return x\n"
    reply = f"```python\n{helper}```\nand\n```python\n{SCRIPT}```\n"
    assert extract_code(reply) == SCRIPT


def test_last_orchestrate_block_wins():
    old = SCRIPT.replace('"x": 1', '"x": 0')
    reply = f"The old script was\n```python\n{old}```\nThe fix:\n```python\n{SCRIPT}```"
    assert extract_code(reply) == SCRIPT


def test_longest_python_block_when_none_defines_orchestrate():
    short, long = "x = 1\n", "def f():\n    return 2\n"
    assert extract_code(f"```py\n{short}```\n```py\n{long}```") == long


def test_other_languages_are_ignored():
    reply = f'```json\n{{"a": 1}}\n```\n```bash\nls\n```\n```python\n{SCRIPT}```'
    assert extract_code(reply) == SCRIPT
    assert extract_code('```json\n{"a": 1}\n```') is None


def test_longer_inner_fence_does_not_close():
    # a four-backtick fence may contain a three-backtick line
    code = 'async def orchestrate(ctx, args):\n    s = """\n```\n"""\n    return s\n'
    assert extract_code(f"````python\n{code}````") == code


def test_indented_fence_strips_its_indentation():
    reply = "1. Replace the script:\n\n   ```python\n   " + SCRIPT.replace("\n", "\n   ").rstrip(" ") + "   ```\n"
    assert extract_code(reply) == SCRIPT


def test_tilde_fence_not_closed_by_backticks():
    code = "async def orchestrate(ctx, args):\n    x = '```'\n    return x\n"
    reply = f"~~~python\n{code}```\n~~~"
    assert extract_code(reply) == code + "```\n"


@pytest.mark.parametrize("reply", ["", "   ", "I cannot help with that.",
                                   "The problem is the size parameter; use 1024x1024.",
                                   "```python\n\n```", "async def orchestrate( broken"])
def test_prose_without_code_is_none(reply):
    assert extract_code(reply) is None


def test_unfenced_script_is_accepted_when_it_parses():
    assert extract_code(SCRIPT) == SCRIPT
    assert extract_code("Explanation first.\n" + SCRIPT) is None  # prose + code: not Python


def test_fenced_blocks_report_info_and_closure():
    blocks = fenced_blocks("```py\na\n```\n~~~\nb")
    assert [(b.info, b.code, b.closed) for b in blocks] == [("py", "a", True), ("", "b", False)]


_line = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n`~\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                max_size=40)


@settings(max_examples=200)
@given(body=st.lists(_line, min_size=1, max_size=12), prose=_line, crlf=st.booleans(),
       tilde=st.booleans())
def test_round_trip_property(body, prose, crlf, tilde):
    code = "\n".join(["async def orchestrate(ctx, args):", *("    " + b for b in body)])
    fence = "~~~" if tilde else "```"
    reply = f"{prose}\n{fence}python\n{code}\n{fence}\n{prose}"
    if crlf:
        reply = reply.replace("\n", "\r\n")
    assert extract_code(reply) == code.strip("\n") + "\n"
