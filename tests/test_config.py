"""The configuration file: precedence, the issue's TOML as written, and errors that name the file,
the key and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from frostline.config import (
    Config,
    MCPProvider,
    OpenAIProvider,
    PythonProvider,
    config_path,
    load_config,
    read_config,
)
from frostline.errors import ConfigError, DefinitionError

ISSUE_TOML = '''
[providers.openai]
kind = "openai"                 # any OpenAI-compatible endpoint
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"  # the key stays on the host; never in the sandbox or the store

[providers.git]
kind = "mcp"
command = ["python", "-m", "mcp_server_git", "--repository", "."]   # stdio; or url = "http://…/mcp"

[providers.mine]
kind = "python"
module = "mytools"              # functions registered with frostline's capability decorator

[capabilities."image.generate"]
provider = "openai"
model = "gpt-image-1"
price_usd = 0.04
'''


def write(tmp_path: Path, text: str, name: str = "frostline.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_issue_toml_reads_as_written(tmp_path):
    config = read_config(write(tmp_path, ISSUE_TOML))
    assert config.providers["openai"] == OpenAIProvider(
        "openai", "https://api.openai.com/v1", "OPENAI_API_KEY")
    git = config.providers["git"]
    assert isinstance(git, MCPProvider)
    assert git.command == ("python", "-m", "mcp_server_git", "--repository", ".")
    assert git.url is None and git.tools is None
    assert config.providers["mine"] == PythonProvider("mine", ("mytools",), False)
    image = config.capabilities["image.generate"]
    assert (image.provider, image.model, image.price_usd) == ("openai", "gpt-image-1", 0.04)
    assert config.builtin is True and config.source == tmp_path / "frostline.toml"


def test_precedence_flag_then_environment_then_working_directory_then_default(tmp_path):
    here = write(tmp_path, "", "frostline.toml")
    env_file = write(tmp_path, "", "env.toml")
    flag_file = write(tmp_path, "", "flag.toml")
    env = {"FROSTLINE_CONFIG": str(env_file)}
    assert config_path(flag_file, env, tmp_path) == flag_file
    assert config_path(None, env, tmp_path) == env_file
    assert config_path(None, {}, tmp_path) == here
    here.unlink()
    assert config_path(None, {}, tmp_path) is None
    assert load_config(None, {}, tmp_path) == Config()


def test_a_flag_or_variable_naming_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        config_path(tmp_path / "nope.toml", {}, tmp_path)
    assert info.value.fields["key"] == "--config"
    with pytest.raises(ConfigError) as info:
        config_path(None, {"FROSTLINE_CONFIG": str(tmp_path / "nope.toml")}, tmp_path)
    assert info.value.fields["key"] == "$FROSTLINE_CONFIG"


@pytest.mark.parametrize(("text", "key", "expected"), [
    ("[providers.x]\nkind = 'ftp'\n", "providers.x.kind", "one of local, openai, mcp, python"),
    ("[providers.x]\nkind = 'mcp'\n", "providers.x.command", "exactly one of"),
    ("[providers.x]\nkind = 'mcp'\ncommand = ['a']\nurl = 'http://h/mcp'\n",
     "providers.x.command", "exactly one of"),
    ("[providers.x]\nkind = 'mcp'\ncommand = []\n", "providers.x.command", "non-empty list"),
    ("[providers.x]\nkind = 'openai'\nbase_url = 'ftp://h'\napi_key_env = 'K'\n",
     "providers.x.base_url", "http:// or https://"),
    ("[providers.x]\nkind = 'openai'\nbase_url = 'https://h'\napi_key_env = 'sk-123'\n",
     "providers.x.api_key_env", "NAME of an environment variable"),
    ("[providers.x]\nkind = 'openai'\nbase_url = 'https://h'\n",
     "providers.x.api_key_env", "NAME of an environment variable"),
    ("[providers.x]\nkind = 'python'\n", "providers.x.module", "a module name"),
    ("[providers.Bad-Name]\nkind = 'local'\n", "providers.Bad-Name", "lowercase"),
    ("[providers.x]\nkind = 'local'\ncolour = 1\n", "providers.x.colour", "one of kind"),
    ("[capabilities.'a.b']\nprovider = 'nowhere'\n", 'capabilities."a.b".provider',
     "the name of a [providers.NAME] table"),
    ("[capabilities.'a.b']\neffect = 'dangerous'\n", 'capabilities."a.b".effect',
     "one of read_only, idempotent, side_effecting"),
    ("[capabilities.'a.b']\nprice_usd = -1\n", 'capabilities."a.b".price_usd', "a number >= 0"),
    ("[capabilities.'a.b']\nprice_usd = true\n", 'capabilities."a.b".price_usd', "a number"),
    ("[models.fast]\nbase_url = 'https://h'\napi_key_env = 'K'\n", "models.fast.model",
     "the model name"),
    ("builtin = 'yes'\n", "builtin", "true or false"),
    ("surprise = 1\n", "surprise", "one of builtin"),
    ("[providers]\nx = 3\n", "providers.x", "a table"),
])
def test_every_error_names_the_file_the_key_and_the_expectation(tmp_path, text, key, expected):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        read_config(path)
    err = info.value
    assert isinstance(err, DefinitionError)  # exit 2 at the command line
    assert err.fields["file"] == str(path) and err.fields["key"] == key
    assert expected in err.fields["expected"]
    assert str(path) in err.message and key in err.message


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, "[providers.x\n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        read_config(path)
    assert info.value.fields["file"] == str(path)


def test_mcp_and_model_options(tmp_path):
    config = read_config(write(tmp_path, '''
builtin = false
[providers.web]
kind = "mcp"
url = "http://127.0.0.1:9/mcp"
bearer_token_env = "WEB_TOKEN"
tools = ["fetch"]
timeout_s = 5
[providers.tz]
kind = "mcp"
command = ["mcp-server-time"]
env = {TZ = "UTC"}
pass_env = ["HOME"]
[providers.plug]
kind = "python"
entry_points = ["weather"]
[models.fast]
base_url = "http://localhost:8000/v1"
api_key_env = "FAST_KEY"
model = "qwen"
'''))
    web = config.providers["web"]
    assert isinstance(web, MCPProvider)
    assert (web.url, web.bearer_token_env, web.tools, web.timeout_s) == (
        "http://127.0.0.1:9/mcp", "WEB_TOKEN", ("fetch",), 5.0)
    tz = config.providers["tz"]
    assert isinstance(tz, MCPProvider) and tz.env == {"TZ": "UTC"} and tz.pass_env == ("HOME",)
    assert config.providers["plug"] == PythonProvider("plug", (), ("weather",))
    fast = config.models["fast"]
    assert (fast.kind, fast.base_url, fast.api_key_env, fast.model) == (
        "openai", "http://localhost:8000/v1", "FAST_KEY", "qwen")
    assert config.builtin is False


def test_service_limits_come_from_the_file_and_flags_win(tmp_path):
    from frostline.cli.serve import _limits
    from frostline.service.limits import ServiceLimits

    path = tmp_path / "frostline.toml"
    path.write_text("[service.limits]\nexecuting_attempts = 2\nruns_per_minute = 5\n")
    config = load_config(path)
    assert dict(config.service_limits) == {"executing_attempts": 2, "runs_per_minute": 5}
    limits = _limits(config.service_limits, {"executing_attempts": None, "runs_per_minute": 9,
                                             "event_streams": None})
    assert (limits.executing_attempts, limits.runs_per_minute, limits.event_streams) == (
        2, 9, ServiceLimits().event_streams)


@pytest.mark.parametrize("text, key", [
    ("[service.limits]\nexecuting_attempts = 0\n", "service.limits.executing_attempts"),
    ("[service.limits]\nexecuting_attempts = 'many'\n", "service.limits.executing_attempts"),
    ("[service.limit]\n", "service.limit"),
])
def test_bad_service_limits_name_the_key(tmp_path, text, key):
    path = tmp_path / "frostline.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.fields["key"] == key and str(path) in info.value.message
