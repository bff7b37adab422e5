"""The fixed vocabulary of the script language: what a script may name and call.

Everything here is an allowlist on purpose. A name or attribute that is not listed is
rejected, so a new Python feature (or a fullwidth spelling that the parser folds to a
forbidden name by NFKC) cannot slip through a denylist gap.
"""

from __future__ import annotations

#: The five ctx primitives. Any other ctx attribute is R02.
PRIMITIVES = frozenset({"run", "parallel", "race", "pipeline", "dag"})
CONTAINERS = frozenset({"parallel", "race", "pipeline", "dag"})

#: Old or invented ctx APIs and the migration the R02 hint gives.
MIGRATIONS: dict[str, str] = {
    "call": 'replace `ctx.call("cap", payload)` with `await ctx.run("cap", payload)`',
    "invoke": 'replace `ctx.invoke("cap", payload)` with `await ctx.run("cap", payload)`',
    "execute": 'replace `ctx.execute("cap", payload)` with `await ctx.run("cap", payload)`',
    "run_sync": 'replace `ctx.run_sync("cap", payload)` with `await ctx.run("cap", payload)`',
    "gather": "replace `ctx.gather(a, b)` with `await ctx.parallel([a, b])`",
    "map": "replace `ctx.map(f, items)` with `await ctx.parallel([f(x) for x in items[:N]])`",
    "fanout": "replace `ctx.fanout(...)` with `await ctx.parallel([...])` over a bounded list",
    "first": "replace `ctx.first(...)` with `await ctx.race([...])`",
    "log": "ctx has no logging; return the values you need from orchestrate",
    "print": "ctx has no printing; return the values you need from orchestrate",
    "args": "the input is the `args` parameter of orchestrate, not an attribute of ctx",
    "sleep": "scripts cannot sleep; the host schedules calls",
    "now": "scripts cannot read the clock; pass the time in args if you need it",
}

#: Data methods of str, list and dict a script may call. `format` and `format_map` are left
#: out on purpose: their replacement fields can walk attributes ("{0.__class__}").
DATA_METHODS = frozenset({
    # dict
    "get", "items", "keys", "values", "update", "setdefault", "copy", "pop", "clear",
    # list
    "append", "extend", "insert", "remove", "sort", "reverse", "count", "index",
    # str
    "join", "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper",
    "title", "capitalize", "casefold", "swapcase", "replace", "startswith", "endswith", "find",
    "rfind", "rindex", "zfill", "center", "ljust", "rjust", "partition", "rpartition",
    "removeprefix", "removesuffix", "isdigit", "isalpha", "isalnum", "isspace", "islower",
    "isupper", "isnumeric", "isdecimal", "istitle", "expandtabs",
})

#: Methods that grow a container; the bound analysis counts them.
GROWING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault"})
#: Methods that mutate without growing.
SHRINKING_METHODS = frozenset({"pop", "remove", "clear", "sort", "reverse"})

#: Builtins a script may name. Everything else (open, eval, exec, compile, getattr, globals,
#: vars, type, id, hash, print, input, __import__, iter, next, repr, ...) is R08.
#: `set`/`frozenset` are allowed so that de-duplication can be written; iterating one
#: without `sorted` is R04. The exception classes are there so that `raise ValueError(...)`
#: and `except Exception:` can be written; BaseException is not (it would catch the host's
#: stop signal).
BUILTINS = frozenset({
    "len", "range", "enumerate", "zip", "min", "max", "sum", "sorted", "reversed", "abs",
    "round", "int", "float", "str", "bool", "list", "dict", "tuple", "any", "all",
    "isinstance", "map", "filter", "set", "frozenset",
    "Exception", "ValueError", "KeyError", "IndexError", "TypeError", "RuntimeError",
    "LookupError", "ArithmeticError", "ZeroDivisionError", "AssertionError",
})
#: Builtins a script is likely to reach for that are not allowed. Naming one is R08 like any
#: other free name; the list only picks the message ("not an allowed builtin" rather than
#: "not defined"), it allows nothing.
FORBIDDEN_BUILTINS = frozenset({
    "open", "eval", "exec", "compile", "getattr", "setattr", "delattr", "hasattr", "globals",
    "locals", "vars", "type", "id", "hash", "print", "input", "__import__", "breakpoint",
    "help", "dir", "object", "super", "memoryview", "bytearray", "bytes", "iter", "next",
    "aiter", "anext", "repr", "format", "classmethod", "staticmethod", "property", "exit",
    "quit", "callable", "chr", "ord", "ascii", "issubclass", "BaseException",
    "KeyboardInterrupt", "SystemExit", "GeneratorExit",
})
EXCEPTION_NAMES = frozenset({
    "Exception", "ValueError", "KeyError", "IndexError", "TypeError", "RuntimeError",
    "LookupError", "ArithmeticError", "ZeroDivisionError", "AssertionError",
})

#: Builtins that consume an iterable completely and return a value without identity, so an
#: iterator, a generator expression or a lambda may be handed to them.
CONSUMERS = frozenset({"list", "tuple", "dict", "set", "frozenset", "sorted", "sum", "min",
                       "max", "any", "all", "len", "enumerate", "zip", "map", "filter",
                       "reversed"})
#: Builtins whose result is an iterator over their argument(s).
ITERATORS = frozenset({"enumerate", "zip", "map", "filter", "reversed"})

#: Caps of the bound analysis.
MAX_LOOP_BOUND = 1000
MAX_NESTED_PRODUCT = 10_000
DEFAULT_MAX_FANOUT = 64
MAX_VIOLATIONS = 200
