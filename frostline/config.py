"""The configuration file: which providers answer which capabilities, and which model endpoints
the repair loop may use.

One TOML file, read once with the standard library's `tomllib` into frozen dataclasses; nothing
here opens a connection, imports a user module or reads a secret (the providers do that, from
the names given here). Where the file comes from, first found wins:

    --config FILE  >  $FROSTLINE_CONFIG  >  ./frostline.toml  >  no file (the defaults)

With no file, frostline is what it always was: the built-in capabilities, answered by the
offline local providers (and the waits by the store). Every error names the file, the key and what was expected.

Shape (keys may be added, never renamed)::

    builtin = true                      # keep the built-in catalog (default true)

    [providers.openai]
    kind = "openai"                     # any OpenAI-compatible endpoint
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"      # the name of the variable, never the key

    [providers.git]
    kind = "mcp"
    command = ["python", "-m", "mcp_server_git", "--repository", "."]   # or url = "http://…/mcp"
    tools = ["git_status", "git_commit"]                                  # default: all

    [providers.mine]
    kind = "python"
    module = "mytools"                  # or entry_points = true

    [capabilities."image.generate"]
    provider = "openai"
    model = "gpt-image-1"
    price_usd = 0.04
    approval = "required"               # each call waits for a person's approval first
    approvers = ["ops", "role:ops"]     # who answers; [approvals] the default (docs/approvals.md)

    [models.fast]
    kind = "openai"
    base_url = "http://localhost:8000/v1"
    api_key_env = "FAST_KEY"
    model = "qwen2.5-coder"
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frostline.capabilities.approvals import ApprovalPolicy, check_approvers
from frostline.capabilities.catalog import EFFECTS
from frostline.errors import ConfigError

ENV_VAR = "FROSTLINE_CONFIG"
DEFAULT_FILE = "frostline.toml"
PROVIDER_KINDS = ("local", "openai", "mcp", "python")
MODEL_KINDS = ("openai",)
APPROVALS = ("required", "none")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class LocalProvider:
    """The offline local providers (real PNGs, deterministic text)."""

    name: str
    latency_s: float = 0.0
    kind: str = "local"


@dataclass(frozen=True)
class OpenAIProvider:
    """An OpenAI-compatible endpoint for image and chat capabilities."""

    name: str
    base_url: str
    api_key_env: str
    timeout_s: float = 120.0
    max_retries: int = 2
    idempotency_keys: bool | None = None
    kind: str = "openai"


@dataclass(frozen=True)
class MCPProvider:
    """An MCP server: started with `command` (stdio) or reached at `url` (streamable HTTP)."""

    name: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # literal values for the server
    pass_env: tuple[str, ...] = ()  # host variables handed to a stdio server by name
    cwd: str | None = None
    tools: tuple[str, ...] | None = None  # None: every tool the server lists
    timeout_s: float = 300.0
    bearer_token_env: str | None = None  # HTTP: Authorization: Bearer $VAR
    kind: str = "mcp"


@dataclass(frozen=True)
class PythonProvider:
    """Python functions marked with `frostline.capabilities.capability`, from modules or entry points."""

    name: str
    modules: tuple[str, ...] = ()
    entry_points: bool | tuple[str, ...] = False  # True: the whole group
    kind: str = "python"


ProviderConfig = LocalProvider | OpenAIProvider | MCPProvider | PythonProvider


@dataclass(frozen=True)
class CapabilityConfig:
    """How one capability is served, and what the catalog says about it (None: keep)."""

    name: str
    provider: str | None = None
    model: str | None = None  # openai: the model sent with each request
    tool: str | None = None  # mcp: the server's tool name, when the capability is renamed
    price_usd: float | None = None
    effect: str | None = None  # one of EFFECTS
    description: str | None = None
    approval: str | None = None  # one of APPROVALS: "required" puts a human approval first
    approvers: tuple[str, ...] | None = None  # who answers its approvals (None: the default)
    self_approval: bool | None = None  # may a run's owner answer them (None: the default)


@dataclass(frozen=True)
class ModelConfig:
    """A model endpoint the repair loop may use, named so an API can allow only these."""

    name: str
    base_url: str
    api_key_env: str
    model: str
    timeout_s: float = 60.0
    max_retries: int = 3
    kind: str = "openai"


@dataclass(frozen=True)
class Config:
    """The whole file. `Config()` is the default: no file, built-in catalog, local providers."""

    source: Path | None = None
    builtin: bool = True
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)
    capabilities: Mapping[str, CapabilityConfig] = field(default_factory=dict)
    models: Mapping[str, ModelConfig] = field(default_factory=dict)
    # [service.limits]: per-principal limits of `frostline serve` (keys of ServiceLimits)
    service_limits: Mapping[str, int] = field(default_factory=dict)
    approvals: ApprovalPolicy = field(default_factory=ApprovalPolicy)  # who answers approvals

    @property
    def label(self) -> str:
        return str(self.source) if self.source is not None else "(no configuration file)"


def config_path(flag: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """The file to read under the precedence flag > $FROSTLINE_CONFIG > ./frostline.toml, or
    None when there is none. A flag or variable naming a missing file is an error."""
    env = os.environ if environ is None else environ
    for chosen, where in ((flag, "--config"), (env.get(ENV_VAR) or None, f"${ENV_VAR}")):
        if chosen is not None:
            path = Path(chosen)
            if not path.is_file():
                raise ConfigError(f"{where} names {str(path)!r}, which is not a readable file",
                                  file=str(path), key=where, expected="an existing TOML file")
            return path
    local = (cwd or Path.cwd()) / DEFAULT_FILE
    return local if local.is_file() else None


def load_config(flag: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Config:
    """Read the configuration chosen by `config_path` (the default Config when there is none).

    Example: ``config = load_config(args.config)``
    """
    path = config_path(flag, environ, cwd)
    return Config() if path is None else read_config(path)


def read_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate one TOML file."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the file ({exc.strerror})", file=str(file),
                          key="", expected="a readable TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc})", file=str(file), key="",
                          expected="TOML") from None
    return parse_config(data, file)


def parse_config(data: Mapping[str, Any], file: Path | None = None) -> Config:
    """Validate parsed TOML; `file` only labels the errors."""
    r = _Reader(str(file) if file is not None else "(configuration)")
    r.only(data, "", ("builtin", "providers", "capabilities", "models", "service", "approvals"))
    providers = {name: _provider(r, name, t)
                 for name, t in r.tables(data, "providers").items()}
    capabilities = {name: _capability(r, name, t, providers)
                    for name, t in r.tables(data, "capabilities").items()}
    models = {name: _model(r, name, t) for name, t in r.tables(data, "models").items()}
    builtin = r.typed(data, "builtin", "", bool, "true or false", default=True)
    return Config(file, builtin, providers, capabilities, models, _service_limits(r, data),
                  _approvals(r, data, capabilities))


def _service_limits(r: _Reader, data: Mapping[str, Any]) -> dict[str, int]:
    service = r.tables(data, "service") if "service" in data else {}
    r.only(service, "service.", ("limits",))
    table = service.get("limits", {})
    limits = {}
    for key in table:
        value = r.typed(table, key, "service.limits.", int, "an integer >= 1")
        if value < 1:
            raise r.fail(f"service.limits.{key}", "an integer >= 1", value)
        limits[key] = int(value)
    return limits


def _approvals(r: _Reader, data: Mapping[str, Any],
               capabilities: Mapping[str, CapabilityConfig]) -> ApprovalPolicy:
    """[approvals] as the default rule; a capability's own keys override it, key by key."""
    table = r.typed(data, "approvals", "", Mapping, "a table: [approvals]", default={})
    r.only(table, "approvals.", ("approvers", "self_approval"))
    return ApprovalPolicy.build(_approvers(r, table, "approvals."), r.typed(
        table, "self_approval", "approvals.", bool, "true or false"),
        {c.name: (c.approvers, c.self_approval) for c in capabilities.values()})


def _approvers(r: _Reader, t: Mapping[str, Any], p: str) -> tuple[str, ...] | None:
    expected = 'a list of principal names and "role:NAME" entries, e.g. ["ops", "role:approver"]'
    try:
        return check_approvers(r.strings(t, "approvers", p, expected))
    except ValueError as exc:
        raise r.fail(p + "approvers", f"{expected} ({exc})", t["approvers"]) from None


# parsing --------------------------------------------------------------------------------------
class _Reader:
    """Typed access to TOML tables; every failure names the file, the key and the expectation."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, key: str, expected: str, got: Any = None, *, missing: bool = False) -> ConfigError:
        what = "is missing" if missing else f"is {got!r}"
        return ConfigError(f"{self.file}: {key} {what}; expected {expected}", file=self.file,
                           key=key, expected=expected)

    def only(self, table: Mapping[str, Any], prefix: str, known: tuple[str, ...]) -> None:
        for key in table:
            if key not in known:
                raise ConfigError(
                    f"{self.file}: unknown key {prefix + key!r}; expected one of "
                    f"{', '.join(known)}", file=self.file, key=prefix + key,
                    expected=f"one of {', '.join(known)}")

    def tables(self, data: Mapping[str, Any], key: str) -> dict[str, Mapping[str, Any]]:
        value = data.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, f"a table of [{key}.NAME] tables", value)
        for name, table in value.items():
            if not isinstance(table, Mapping):
                raise self.fail(f"{key}.{name}", "a table", table)
        return dict(value)

    def typed(self, table: Mapping[str, Any], key: str, prefix: str, kind: type | tuple[type, ...],
              expected: str, *, default: Any = None, required: bool = False) -> Any:
        if key not in table:
            if required:
                raise self.fail(prefix + key, expected, missing=True)
            return default
        value = table[key]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(prefix + key, expected, value)
        if not isinstance(value, kind) or (isinstance(value, str) and not value):
            raise self.fail(prefix + key, expected, value)
        return value

    def number(self, table: Mapping[str, Any], key: str, prefix: str, *, default: float | None,
               positive: bool = False) -> float | None:
        expected = "a number > 0" if positive else "a number >= 0"
        value = self.typed(table, key, prefix, (int, float), expected, default=default)
        if value is not None and (value < 0 or (positive and value == 0) or value != value):
            raise self.fail(prefix + key, expected, value)
        return None if value is None else float(value)

    def strings(self, table: Mapping[str, Any], key: str, prefix: str, expected: str,
                *, required: bool = False) -> tuple[str, ...] | None:
        value = self.typed(table, key, prefix, list, expected, required=required)
        if value is None:
            return None
        if not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(prefix + key, expected, value)
        return tuple(value)

    def env_name(self, table: Mapping[str, Any], key: str, prefix: str, *,
                 required: bool) -> str | None:
        expected = "the NAME of an environment variable (the secret stays in the environment)"
        value = self.typed(table, key, prefix, str, expected, required=required)
        if value is not None and not _ENV_NAME.match(value):
            raise self.fail(prefix + key, expected, value)
        return value  # type: ignore[no-any-return]


def _provider(r: _Reader, name: str, t: Mapping[str, Any]) -> ProviderConfig:
    p = f"providers.{name}."
    if not _NAME.match(name):
        raise r.fail(f"providers.{name}", "a provider name of lowercase letters, digits and _ "
                     "starting with a letter (it prefixes capability names)", name)
    kind = r.typed(t, "kind", p, str, f"one of {', '.join(PROVIDER_KINDS)}", required=True)
    if kind not in PROVIDER_KINDS:
        raise r.fail(p + "kind", f"one of {', '.join(PROVIDER_KINDS)}", kind)
    if kind == "local":
        r.only(t, p, ("kind", "latency_s"))
        return LocalProvider(name, r.number(t, "latency_s", p, default=0.0) or 0.0)
    if kind == "openai":
        r.only(t, p, ("kind", "base_url", "api_key_env", "timeout_s", "max_retries",
                      "idempotency_keys"))
        return OpenAIProvider(
            name, _url(r, t, "base_url", p, required=True) or "",
            r.env_name(t, "api_key_env", p, required=True) or "",
            r.number(t, "timeout_s", p, default=120.0, positive=True) or 120.0,
            _count(r, t, "max_retries", p, 2),
            r.typed(t, "idempotency_keys", p, bool, "true or false"))
    if kind == "python":
        return _python(r, name, t, p)
    return _mcp(r, name, t, p)


def _mcp(r: _Reader, name: str, t: Mapping[str, Any], p: str) -> MCPProvider:
    r.only(t, p, ("kind", "command", "url", "env", "pass_env", "cwd", "tools", "timeout_s",
                  "bearer_token_env"))
    command = r.strings(t, "command", p, "a non-empty list of strings, e.g. "
                        '["python", "-m", "mcp_server_git"]')
    url = _url(r, t, "url", p, required=False)
    if (command is None) == (url is None):
        raise r.fail(p + "command", "exactly one of 'command' (stdio) or 'url' (streamable "
                     "HTTP)", missing=command is None)
    env = r.typed(t, "env", p, Mapping, "a table of string values", default={})
    if not all(isinstance(v, str) and _ENV_NAME.match(k) for k, v in env.items()):
        raise r.fail(p + "env", "a table of VARIABLE = \"value\" strings", dict(env))
    pass_env = r.strings(t, "pass_env", p, "a list of environment variable names") or ()
    for var in pass_env:
        if not _ENV_NAME.match(var):
            raise r.fail(p + "pass_env", "a list of environment variable names", var)
    if url is not None and (env or pass_env or "cwd" in t):
        raise r.fail(p + "url", "no env, pass_env or cwd with 'url' (they configure a process "
                     "that frostline starts)", url)
    return MCPProvider(
        name, command, url, dict(env), pass_env,
        r.typed(t, "cwd", p, str, "a directory path"),
        r.strings(t, "tools", p, "a non-empty list of tool names"),
        r.number(t, "timeout_s", p, default=300.0, positive=True) or 300.0,
        r.env_name(t, "bearer_token_env", p, required=False))


def _python(r: _Reader, name: str, t: Mapping[str, Any], p: str) -> PythonProvider:
    r.only(t, p, ("kind", "module", "entry_points"))
    raw = t.get("module")
    modules: tuple[str, ...]
    if raw is None:
        modules = ()
    elif isinstance(raw, str) and raw:
        modules = (raw,)
    else:
        modules = r.strings(t, "module", p, "a module name or a list of module names") or ()
    eps = t.get("entry_points", False)
    if isinstance(eps, list):
        eps = r.strings(t, "entry_points", p, "true, or a list of entry point names")
    elif not isinstance(eps, bool):
        raise r.fail(p + "entry_points", "true, or a list of entry point names", eps)
    if not modules and not eps:
        raise r.fail(p + "module", "a module name (or entry_points = true for the "
                     "'frostline.capabilities' entry points)", missing=True)
    return PythonProvider(name, modules, eps)


def _capability(r: _Reader, name: str, t: Mapping[str, Any],
                providers: Mapping[str, ProviderConfig]) -> CapabilityConfig:
    p = f'capabilities."{name}".'
    r.only(t, p, ("provider", "model", "tool", "price_usd", "effect", "description",
                  "approval", "approvers", "self_approval"))
    provider = r.typed(t, "provider", p, str, f"one of the providers ({', '.join(providers)})")
    if provider is not None and provider not in providers and provider != "local":
        raise r.fail(p + "provider", "the name of a [providers.NAME] table (or \"local\"); "
                     f"declared: {', '.join(providers) or 'none'}", provider)
    effect = r.typed(t, "effect", p, str, f"one of {', '.join(EFFECTS)}")
    if effect is not None and effect not in EFFECTS:
        raise r.fail(p + "effect", f"one of {', '.join(EFFECTS)}", effect)
    return CapabilityConfig(
        name, provider, r.typed(t, "model", p, str, "a model name"),
        r.typed(t, "tool", p, str, "the MCP tool's name"),
        r.number(t, "price_usd", p, default=None), effect,
        r.typed(t, "description", p, str, "a string"), _approval(r, t, p),
        _approvers(r, t, p), r.typed(t, "self_approval", p, bool, "true or false"))


def _approval(r: _Reader, t: Mapping[str, Any], p: str) -> str | None:
    approval = r.typed(t, "approval", p, str, f"one of {', '.join(APPROVALS)}")
    if approval is not None and approval not in APPROVALS:
        raise r.fail(p + "approval", f"one of {', '.join(APPROVALS)}", approval)
    if approval == "none" and ("approvers" in t or "self_approval" in t):  # nothing to answer
        raise r.fail(p + "approval", '"required" with approvers or self_approval', approval)
    return None if approval is None else str(approval)


def _model(r: _Reader, name: str, t: Mapping[str, Any]) -> ModelConfig:
    p = f"models.{name}."
    if not _NAME.match(name) or len(name) > 64:
        raise r.fail(f"models.{name}", "a model name of lowercase letters, digits and _ "
                     "starting with a letter (at most 64): clients name it", name)
    r.only(t, p, ("kind", "base_url", "api_key_env", "model", "timeout_s", "max_retries"))
    kind = r.typed(t, "kind", p, str, f"one of {', '.join(MODEL_KINDS)}", default="openai")
    if kind not in MODEL_KINDS:
        raise r.fail(p + "kind", f"one of {', '.join(MODEL_KINDS)}", kind)
    return ModelConfig(
        name, _url(r, t, "base_url", p, required=True) or "",
        r.env_name(t, "api_key_env", p, required=True) or "",
        r.typed(t, "model", p, str, "the model name sent to the endpoint", required=True),
        r.number(t, "timeout_s", p, default=60.0, positive=True) or 60.0,
        _count(r, t, "max_retries", p, 3))


def _url(r: _Reader, t: Mapping[str, Any], key: str, p: str, *, required: bool) -> str | None:
    expected = "an http:// or https:// URL"
    value = r.typed(t, key, p, str, expected, required=required)
    if value is not None and not re.match(r"^https?://[^\s/]+", value):
        raise r.fail(p + key, expected, value)
    return value  # type: ignore[no-any-return]


def _count(r: _Reader, t: Mapping[str, Any], key: str, p: str, default: int) -> int:
    value = r.typed(t, key, p, int, "an integer in 0..10", default=default)
    if not 0 <= value <= 10:
        raise r.fail(p + key, "an integer in 0..10", value)
    return int(value)
