"""Mutation operators for the checker-validity study (the paper's P2): text surgery and the
destroying operators; the preserving ones are in ``bench.mutation_preserving``.

A *destroying* operator makes a script violate one checker rule (its target) and nothing else
where that is possible; a *preserving* operator changes the text of a script without changing
what the rules judge (names, layout, comments, statement order, temporaries). Every operator
returns all the places it could apply to one script, as (mutated source, where) pairs, in a
deterministic order; the study samples among them with a seeded generator. An operator that
has no place in a script is "not applicable" there.

Destroying operators edit the text at AST positions so that the rest of the script stays
byte-identical; preserving operators that need a consistent rewrite (renames) go through
``ast.unparse``, which drops comments and reformats, and is itself one of the preserving edits.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

Edit = tuple[str, str]  # (mutated source, where it applied)
Kind = Literal["destroying", "preserving"]
CONTAINERS = frozenset({"parallel", "race", "pipeline", "dag"})
#: Attribute names a script may use on data (rule R07, docs/script.md); `x["k"]` -> `x.k` is only a
#: mutation when k is not one of them.
DATA_METHODS = frozenset({
    "get", "items", "keys", "values", "append", "extend", "insert", "pop", "update", "copy",
    "join", "split", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper", "title",
    "capitalize", "replace", "startswith", "endswith", "count", "index", "zfill",
})
MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "update", "remove", "clear",
                              "sort", "reverse", "setdefault"})


@dataclass(frozen=True)
class Operator:
    """One mutation operator. ``rule`` is the rule a destroying mutant must trigger."""

    name: str
    kind: Kind
    rule: str | None
    description: str
    apply: Callable[[str, ast.Module, random.Random], list[Edit]]


# --- positions and small text surgery ---------------------------------------------------------


class Text:
    """A source with AST positions (UTF-8 byte columns) mapped to string offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.source[a:b]

    def replace(self, node: ast.AST, text: str) -> str:
        a, b = self.span(node)
        return self.source[:a] + text + self.source[b:]

    def insert_before_line(self, lineno: int, text: str) -> str:
        at = self.starts[lineno - 1]
        return self.source[:at] + text + self.source[at:]

    def indent_of(self, node: ast.stmt) -> str:
        return " " * node.col_offset


def _funcs(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _entry(tree: ast.Module) -> ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "orchestrate":
            return node
    return None


def _first_stmt(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
    body = func.body
    has_doc = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
               and isinstance(body[0].value.value, str))
    return body[1] if has_doc and len(body) > 1 else body[0]


def _prepend(source: str, tree: ast.Module, lines: list[str]) -> list[Edit]:
    """Insert statement lines at the top of orchestrate's body (after its docstring)."""
    entry = _entry(tree)
    if entry is None:
        return []
    first = _first_stmt(entry)
    text = Text(source)
    indent = text.indent_of(first)
    block = "".join(indent + line + "\n" for line in lines)
    return [(text.insert_before_line(first.lineno, block), f"orchestrate line {first.lineno}")]


def _is_ctx_call(node: ast.AST, attrs: frozenset[str] = frozenset({"run"})) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "ctx"
            and node.func.attr in attrs)


def _run_calls(tree: ast.Module) -> list[ast.Call]:
    calls = [n for n in ast.walk(tree) if _is_ctx_call(n)]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))  # type: ignore[arg-type]


def _literal_capability(call: ast.Call) -> ast.Constant | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0]
    return None


def _sorted(nodes: list[ast.AST]) -> list[ast.AST]:
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


def _bounded_slice(node: ast.AST) -> bool:
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
            and node.slice.step is None)


def _outside_data(node: ast.AST) -> bool:
    """Data whose length the script does not fix: an item of args, of a capability result or
    of any other mapping (`args["shots"]`, `plan["shots"]`, `args.get("xs", [])`). Dropping a
    slice makes a loop over such data unbounded; a name, by contrast, may be bound to a
    value that is bounded already (`refs = await ctx.parallel([...])`), and then the slice
    was only a redundant guard."""
    if isinstance(node, ast.Subscript):
        return not isinstance(node.slice, ast.Slice)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get")


def _const_range(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], ast.Constant | ast.Name))


# --- destroying operators -----------------------------------------------------------------------


def syntax_error(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R00: an unclosed bracket, the commonest truncation of a model's output."""
    return _prepend(source, tree, ["pending = ("])


def toplevel_statement(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R01: a module-level statement that computes (runs when the module loads)."""
    first = tree.body[0]
    text = Text(source)
    return [(text.insert_before_line(first.lineno, 'STYLE_HINT = "cinematic".upper()\n\n\n'),
             "module top")]


def rename_entry(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R01: the entry point under another name (no orchestrate)."""
    entry = _entry(tree)
    if entry is None or any(isinstance(n, ast.Name) and n.id == "orchestrate"
                            for n in ast.walk(tree)):
        return []
    text = Text(source)
    at = text.offset(entry.lineno, entry.col_offset)
    head = source[at:]
    new = head.replace("async def orchestrate(", "async def main(", 1)
    return [(source[:at] + new, f"line {entry.lineno}")]


def old_api(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R02: ctx.run renamed to a retired API (ctx.call or ctx.invoke)."""
    text = Text(source)
    out = []
    for call in _run_calls(tree):
        func = call.func
        assert isinstance(func, ast.Attribute)
        new = rng.choice(["call", "invoke"])
        out.append((text.replace(func, f"ctx.{new}"), f"line {call.lineno}: ctx.{new}"))
    return out


def unslice_for(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R03: a for loop over a bounded slice or range made unbounded."""
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.For)]):
        assert isinstance(node, ast.For)
        it = node.iter
        if _bounded_slice(it) and _outside_data(it.value):  # type: ignore[attr-defined]
            assert isinstance(it, ast.Subscript)
            out.append((text.replace(it, text.segment(it.value)), f"line {node.lineno}: slice dropped"))
        elif _const_range(it):
            out.append((text.replace(it, "range(len(args))"), f"line {node.lineno}: range(len(args))"))
    return out


def for_to_while(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R03: `for i in range(N)` rewritten as a counting while loop."""
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.For)]):
        assert isinstance(node, ast.For)
        if node.orelse or not _const_range(node.iter) or not isinstance(node.target, ast.Name):
            continue
        assert isinstance(node.iter, ast.Call)
        var, bound = node.target.id, text.segment(node.iter.args[0])
        indent, inner = text.indent_of(node), text.indent_of(node.body[0])
        header_end = text.offset(node.body[0].lineno, 0)
        start = text.starts[node.lineno - 1]
        end = text.starts[node.end_lineno]  # type: ignore[index]
        body = source[header_end:end]
        new = (f"{indent}{var} = 0\n{indent}while {var} < {bound}:\n{body}"
               f"{inner}{var} = {var} + 1\n")
        out.append((source[:start] + new + source[end:], f"line {node.lineno}"))
    return out


def grow_iterated_list(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R03: a loop appends to the bounded list it iterates (a work queue that never drains)."""
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.For)]):
        assert isinstance(node, ast.For)
        if not (isinstance(node.iter, ast.Name) and isinstance(node.target, ast.Name)):
            continue
        first = node.body[0]
        line = f"{text.indent_of(first)}{node.iter.id}.append({node.target.id})\n"
        out.append((text.insert_before_line(first.lineno, line), f"line {node.lineno}"))
    return out


def shadow_range(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R03: a top-level function named `range` shadows the builtin a loop is bounded by."""
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.For | ast.comprehension)
            and _const_range(n.iter)]
    if not uses:
        return []
    text = Text(source)
    helper = "def range(n):\n    return [n] * n * 1000\n\n\n"
    return [(text.insert_before_line(tree.body[0].lineno, helper), f"{len(uses)} loops")]


def set_iteration(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R04: a for loop over set(...) of its bounded iterable (order depends on hashing)."""
    text = Text(source)
    return [(text.replace(n.iter, f"set({text.segment(n.iter)})"), f"line {n.lineno}")
            for n in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.For)])
            if isinstance(n, ast.For)]


def _fanout_bounds(tree: ast.Module) -> list[tuple[ast.Call, ast.AST]]:
    """(container call, the node that bounds its width): the slice or range of the
    comprehension handed to it, or its items slice, each either written in place or reached
    through a name bound once (`jobs = [...]`, `shots = xs[:4]`)."""
    counts: dict[str, int] = {}
    bound: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            bound[node.targets[0].id] = node.value

    def resolve(expr: ast.expr) -> ast.expr:
        if isinstance(expr, ast.Name) and counts.get(expr.id) == 1 and expr.id in bound:
            return bound[expr.id]
        return expr

    out = []
    for node in ast.walk(tree):
        if not _is_ctx_call(node, CONTAINERS) or not node.args:  # type: ignore[attr-defined]
            continue
        assert isinstance(node, ast.Call)
        arg = resolve(node.args[0])
        if isinstance(arg, ast.ListComp) and len(arg.generators) == 1:
            it = resolve(arg.generators[0].iter)
            for _ in range(3):  # through a chain of comprehensions (`prompts = [...]`)
                if not (isinstance(it, ast.ListComp) and len(it.generators) == 1):
                    break
                it = resolve(it.generators[0].iter)
            if (_bounded_slice(it) and _outside_data(it.value)) or _const_range(it):  # type: ignore[attr-defined]
                out.append((node, it))
        elif _bounded_slice(arg) and _outside_data(arg.value):  # type: ignore[attr-defined]
            out.append((node, arg))
    return sorted(out, key=lambda p: (p[1].lineno, p[1].col_offset))  # type: ignore[attr-defined]


def widen_fanout(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R05: a fanout bound raised to 100, above the default envelope's max_fanout (64)."""
    text = Text(source)
    out = []
    for call, it in _fanout_bounds(tree):
        new = f"{text.segment(it.value)}[:100]" if isinstance(it, ast.Subscript) else "range(100)"
        out.append((text.replace(it, new), f"line {it.lineno}: ctx.{call.func.attr} width 100"))  # type: ignore[attr-defined]
    return out


def unguard_fanout(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R05: a fanout's bound removed (directly or through the list variable it is built in)."""
    text = Text(source)
    out = []
    for call, it in _fanout_bounds(tree):
        new = text.segment(it.value) if isinstance(it, ast.Subscript) else "range(len(args))"
        out.append((text.replace(it, new), f"line {it.lineno}: ctx.{call.func.attr} unguarded"))  # type: ignore[attr-defined]
    return out


def add_import(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R06: an import at the top of orchestrate."""
    line = rng.choice(["import json", "import random", "from datetime import datetime",
                       "import os"])
    return _prepend(source, tree, [line])


def add_dunder(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R07: a dunder attribute read."""
    line = rng.choice(["kind = args.__class__.__name__", "footprint = args.__sizeof__()",
                       "hook = args.__init__"])
    return _prepend(source, tree, [line])


def attribute_access(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R07: `result["key"]` written as `result.key` (an attribute outside the allowlist)."""
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.Subscript)]):
        assert isinstance(node, ast.Subscript)
        key = node.slice
        if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and node.value.id != "ctx" and isinstance(key, ast.Constant)
                and isinstance(key.value, str) and key.value.isidentifier()
                and key.value not in DATA_METHODS and not key.value.startswith("_")
                and not _inside_fstring(tree, node)):
            out.append((text.replace(node, f"{node.value.id}.{key.value}"),
                        f"line {node.lineno}: .{key.value}"))
    return out


def _inside_fstring(tree: ast.Module, target: ast.AST) -> bool:
    return any(isinstance(n, ast.JoinedStr) and any(m is target for m in ast.walk(n))
               for n in ast.walk(tree))


def hidden_input(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R08: a builtin outside the allowlist that reads or leaks hidden state."""
    line = rng.choice(["print(args)", "token = input()", "salt = hash(str(args))",
                       "marker = id(args)", "fields = vars(args)"])
    return _prepend(source, tree, [line])


def add_class(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R09: a class definition inside orchestrate."""
    return _prepend(source, tree, ["class Settings:", '    size = "1024x1024"'])


def add_global(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R09: a global statement."""
    return _prepend(source, tree, ["global RUN_CACHE"])


def bare_except(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R09: `except Exception:` widened to a bare `except:` (swallows the host's stop)."""
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]):
        assert isinstance(node, ast.ExceptHandler)
        if node.type is None:
            continue
        used = node.name is not None and any(
            isinstance(n, ast.Name) and n.id == node.name for b in node.body for n in ast.walk(b))
        if used:
            continue
        start = text.offset(node.lineno, node.col_offset)
        colon = source.index(":", text.offset(node.type.end_lineno, node.type.end_col_offset))  # type: ignore[arg-type]
        out.append((source[:start] + "except" + source[colon:], f"line {node.lineno}"))
    return out


def add_site(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R10: a model-written `_site=` keyword in a ctx.run call."""
    text = Text(source)
    out = []
    for call in _run_calls(tree):
        last = call.keywords[-1].value if call.keywords else call.args[-1]
        at = text.offset(last.end_lineno, last.end_col_offset)  # type: ignore[arg-type]
        out.append((source[:at] + ', _site="orchestrate/#0"' + source[at:], f"line {call.lineno}"))
    return out


def computed_capability(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R11: the capability name computed at run time (`"image." + args.get("kind", ...)`, or
    `".".join([...])` where `args` is out of scope)."""
    text = Text(source)
    entry = _entry(tree)
    in_entry = {id(n) for n in ast.walk(entry)} if entry is not None else set()
    out = []
    for call in _run_calls(tree):
        lit = _literal_capability(call)
        if lit is None:
            continue
        prefix, _, suffix = str(lit.value).rpartition(".")
        if id(call) in in_entry and prefix:
            new = f'"{prefix}." + args.get("kind", "{suffix}")'
        else:  # `args` is not in scope in a top-level helper: assemble the name instead
            parts = ", ".join(f'"{p}"' for p in str(lit.value).split("."))
            new = f'".".join([{parts}])'
        out.append((text.replace(lit, new), f"line {call.lineno}"))
    return out


def unknown_capability(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R11: a capability name that is not in the catalog (`image.generate_hd`)."""
    text = Text(source)
    out = []
    for call in _run_calls(tree):
        lit = _literal_capability(call)
        if lit is not None:
            out.append((text.replace(lit, f'"{lit.value!s}_hd"'), f"line {call.lineno}"))
    return out


def drop_await(source: str, tree: ast.Module, rng: random.Random) -> list[Edit]:
    """R12: an `await` removed from a capability call, a container or a helper coroutine."""
    helpers = {f.name for f in _funcs(tree) if isinstance(f, ast.AsyncFunctionDef)}
    text = Text(source)
    out = []
    for node in _sorted([n for n in ast.walk(tree) if isinstance(n, ast.Await)]):
        assert isinstance(node, ast.Await)
        value = node.value
        is_helper = (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                     and value.func.id in helpers)
        if is_helper or _is_ctx_call(value, CONTAINERS | {"run"}):
            out.append((text.replace(node, text.segment(value)), f"line {node.lineno}"))
    return out


DESTROYING: tuple[Operator, ...] = (
    Operator("syntax_error", "destroying", "R00", "unclosed bracket", syntax_error),
    Operator("toplevel_statement", "destroying", "R01", "computed module-level statement",
             toplevel_statement),
    Operator("rename_entry", "destroying", "R01", "orchestrate renamed to main", rename_entry),
    Operator("old_api", "destroying", "R02", "ctx.run -> ctx.call / ctx.invoke", old_api),
    Operator("unslice_for", "destroying", "R03", "for-loop slice or range made unbounded",
             unslice_for),
    Operator("for_to_while", "destroying", "R03", "for over range(N) -> while loop", for_to_while),
    Operator("grow_iterated_list", "destroying", "R03", "loop appends to the list it iterates",
             grow_iterated_list),
    Operator("shadow_range", "destroying", "R03", "top-level def range(n) shadows the builtin",
             shadow_range),
    Operator("set_iteration", "destroying", "R04", "for over set(...)", set_iteration),
    Operator("widen_fanout", "destroying", "R05", "fanout width 100 > max_fanout 64",
             widen_fanout),
    Operator("unguard_fanout", "destroying", "R05", "fanout bound removed (direct or via a list)",
             unguard_fanout),
    Operator("add_import", "destroying", "R06", "import statement", add_import),
    Operator("add_dunder", "destroying", "R07", "dunder attribute", add_dunder),
    Operator("attribute_access", "destroying", "R07", 'r["k"] -> r.k', attribute_access),
    Operator("hidden_input", "destroying", "R08", "print/input/hash/id/vars", hidden_input),
    Operator("add_class", "destroying", "R09", "class definition", add_class),
    Operator("add_global", "destroying", "R09", "global statement", add_global),
    Operator("bare_except", "destroying", "R09", "except Exception -> bare except", bare_except),
    Operator("add_site", "destroying", "R10", "_site= keyword", add_site),
    Operator("computed_capability", "destroying", "R11", "capability name computed",
             computed_capability),
    Operator("unknown_capability", "destroying", "R11", "capability not in the catalog",
             unknown_capability),
    Operator("drop_await", "destroying", "R12", "await removed (fire-and-forget)", drop_await),
)
