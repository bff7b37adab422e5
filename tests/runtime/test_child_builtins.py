"""The script process offers exactly the builtins the checker allows.

A name the checker accepts but the script process lacks turns a valid script into a
NameError at run time (``set`` and ``frozenset`` once were such names); a name the process
offers beyond the checker's allowlist would be a builtin the checker never vetted.
"""

from __future__ import annotations

import asyncio

from frostline.runtime.child import SAFE_BUILTIN_NAMES, load_entry
from frostline.script import check
from frostline.script.allowlists import BUILTINS

DEDUPE = '''
async def orchestrate(ctx, args):
    tags = sorted(set(args["tags"][:6]))
    frozen = sorted(frozenset(tags))
    return {"tags": tags, "frozen": frozen}
'''


def test_the_script_process_offers_the_checkers_builtins() -> None:
    assert set(SAFE_BUILTIN_NAMES) == set(BUILTINS)
    assert len(SAFE_BUILTIN_NAMES) == len(set(SAFE_BUILTIN_NAMES))


def test_a_valid_script_that_deduplicates_with_set_runs() -> None:
    assert check(DEDUPE).valid
    entry = load_entry(DEDUPE)
    result = asyncio.run(entry(None, {"tags": ["b", "a", "b"]}))  # type: ignore[arg-type]
    assert result == {"tags": ["a", "b"], "frozen": ["a", "b"]}
