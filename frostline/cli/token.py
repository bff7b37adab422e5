"""`frostline token create|list|revoke`: the bearer tokens the HTTP service accepts.

A token is shown once, when it is created; afterwards it is named by its public prefix (the
part before the second '_', e.g. ``fl_3f9a2c1b7d0e``), which `list` shows and `revoke` takes.
A revoked or expired token is refused by a running server from its next request on. A token
carries roles (`--role approver`; `runner` when none is given), which decide the approvals it
may answer (docs/approvals.md).
`list` and `revoke` only read or change existing tokens: they never create a store.
"""

from __future__ import annotations

import re
import time

import click
from rich.table import Table

from frostline.capabilities.approvals import APPROVER_ROLE, DEFAULT_ROLE, normalize_roles
from frostline.cli.common import (
    EXIT_USAGE,
    Group,
    console,
    emit_json,
    fail,
    guarded,
    json_option,
    opened_store,
    store_option,
    text,
)

_PRINCIPAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^([1-9][0-9]{0,8})([smhd])$")


def parse_lifetime(text: str) -> int:
    """Seconds in a lifetime written as a whole number and a unit: 90s, 15m, 12h, 30d."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise click.BadParameter(f"{text!r} is not a lifetime: write a whole number followed by "
                                 "s, m, h or d (seconds, minutes, hours, days), e.g. 30d")
    return int(match.group(1)) * _UNITS[match.group(2)]


def _lifetime_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    return None if value is None else parse_lifetime(value)


def _roles_option(ctx: click.Context, param: click.Parameter,
                  value: tuple[str, ...]) -> tuple[str, ...]:
    """Every --role, each possibly a comma list (--role approver,runner), checked."""
    roles = [r.strip() for v in value for r in v.split(",") if r.strip()]
    try:
        return normalize_roles(roles)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.group("token", cls=Group)
def token() -> None:
    """Manage API bearer tokens."""


@token.command("create")
@click.argument("name")
@click.option("--expires", "lifetime", callback=_lifetime_option, default=None, metavar="DURATION",
              help="Refuse the token after this long: 90s, 15m, 12h, 30d (default: never).")
@click.option("--role", "roles", multiple=True, callback=_roles_option, metavar="ROLE",
              help=f"A role of the token, e.g. {APPROVER_ROLE} (it may answer approvals); "
                   f"repeat it or give a comma list (default: {DEFAULT_ROLE}).")
@store_option
@json_option
def create(name: str, lifetime: int | None, roles: tuple[str, ...], store_url: str | None,
           as_json: bool) -> None:
    """Create a token for principal NAME; the token is printed alone on the last line (with
    --json: {"principal", "token", "expires_at", "roles"})."""
    if not _PRINCIPAL.match(name):
        fail("NAME must be 1-64 characters: letters, digits, '.', '_', '@' or '-'", EXIT_USAGE,
             as_json)
    with opened_store(store_url, as_json) as store:
        value = guarded(as_json, lambda: store.create_token(name, expires_in_s=lifetime,
                                                            roles=roles))
    expires_at = None if lifetime is None else time.time() + lifetime
    if as_json:
        emit_json({"principal": name, "token": value, "expires_at": expires_at,
                   "roles": list(roles)})
        return
    until = "" if expires_at is None else f", valid until {_when(expires_at)}"
    click.echo(f"Created a token for {name} with the role{'s' if len(roles) > 1 else ''} "
               f"{', '.join(roles)}{until}. It is shown once; only its hash is stored.",
               err=True)
    click.echo(value)


@token.command("list")
@json_option
@store_option
def list_command(as_json: bool, store_url: str | None) -> None:
    """List every token (never the token itself): prefix, principal, roles, status, times."""
    with opened_store(store_url, as_json, create=False) as store:
        records = guarded(as_json, store.list_tokens)
    now = time.time()
    if as_json:
        emit_json({"tokens": [r.to_dict(now) for r in records]})
        return
    table = Table(title=f"{len(records)} token(s)")
    for column in ("prefix", "principal", "roles", "status", "created", "expires", "revoked"):
        table.add_column(column)
    for r in records:
        table.add_row(text(r.prefix or "(none)"), text(r.principal), text(",".join(r.roles)),
                      text(r.status(now)),
                      _when(r.created_at), _when(r.expires_at), _when(r.revoked_at))
    console().print(table)


@token.command("revoke")
@click.argument("target", metavar="NAME|TOKEN-PREFIX")
@json_option
@store_option
def revoke(target: str, as_json: bool, store_url: str | None) -> None:
    """Revoke every token of principal NAME, or the one token with TOKEN-PREFIX (as `token
    list` shows it) or given whole. A running server refuses it from the next request on."""
    with opened_store(store_url, as_json, create=False) as store:
        records = guarded(as_json, lambda: store.revoke_tokens(target))
    if not records:
        fail(f"no principal and no token is named {target!r}; see `frostline token list`",
             EXIT_USAGE, as_json)
    if as_json:
        now = time.time()
        emit_json({"revoked": [r.to_dict(now) for r in records]})
        return
    for r in records:
        click.echo(f"revoked {r.prefix or '(token without prefix)'} of {r.principal} "
                   f"(at {_when(r.revoked_at)})")


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(ts))


__all__ = ["parse_lifetime", "token"]
