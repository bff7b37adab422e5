"""Who may answer an approval: the roles a token carries and the approvers a capability names.

An approval in a service with several principals means a second party. Each bearer token
carries roles (`frostline token create NAME --role approver`; ``runner`` when none is given),
and the configuration file says who answers which approvals::

    [approvals]                          # the default of every approval
    approvers = ["role:approver"]        # principals by name, roles as "role:NAME"
    self_approval = false                # may a run's owner answer its own approvals?

    [capabilities."deploy.prod"]
    approval = "required"
    approvers = ["ops", "role:release"]  # this capability's approvals: these, not the default
    self_approval = false

An explicit ``human.approve`` wait is ruled by ``[capabilities."human.approve"]`` (or the
default). Over HTTP and MCP, a run's owner answers its own approval only where
``self_approval`` is true; anyone else answers it when named in ``approvers`` or holding one of
the roles named there. The command line acts for the local principal (one user, one machine)
and is not asked. Plain data and pure decisions: the surfaces call `ApprovalPolicy.refusal`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

ROLE_PREFIX = "role:"
DEFAULT_ROLE = "runner"
APPROVER_ROLE = "approver"
DEFAULT_APPROVERS = (ROLE_PREFIX + APPROVER_ROLE,)
ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
ROLE_RULE = "1-32 lowercase letters, digits, '_' or '-', starting with a letter"


def check_role(role: object) -> str:
    """`role` if it can name a role; ValueError (with the rule) otherwise."""
    if not isinstance(role, str) or not ROLE.match(role):
        raise ValueError(f"role {role!r} must be {ROLE_RULE}, e.g. 'approver'")
    return role


def normalize_roles(roles: Iterable[str] | None) -> tuple[str, ...]:
    """The roles of a token, checked, without duplicates, sorted; ``("runner",)`` for none."""
    chosen = sorted({check_role(r) for r in (roles or ())})
    return tuple(chosen) or (DEFAULT_ROLE,)


def check_approver(entry: object) -> str:
    """`entry` if it names a principal (``ops``) or a role (``role:approver``); ValueError
    otherwise."""
    if not isinstance(entry, str) or not entry:
        raise ValueError("an approver is a principal's name or 'role:NAME'")
    if entry.startswith(ROLE_PREFIX):
        check_role(entry[len(ROLE_PREFIX):])
        return entry
    if len(entry) > 200 or any(ch in "/:" or ch.isspace() or not ch.isprintable()
                               for ch in entry):
        raise ValueError(f"approver {entry!r} must be a principal's name (no whitespace, '/' "
                         "or ':') or 'role:NAME'")
    return entry


def check_approvers(entries: Iterable[str] | None) -> tuple[str, ...] | None:
    """Each of `entries` checked with `check_approver` (None stays None)."""
    return None if entries is None else tuple(check_approver(e) for e in entries)


@dataclass(frozen=True)
class ApprovalRule:
    """Who answers the approvals of one capability (or of every capability, by default)."""

    approvers: tuple[str, ...] = DEFAULT_APPROVERS
    self_approval: bool = False

    def admits(self, caller: str, roles: Iterable[str]) -> bool:
        """Whether `caller`, with a token of `roles`, is one of the approvers."""
        return caller in self.approvers or any(
            ROLE_PREFIX + r in self.approvers for r in roles)

    def describe(self) -> str:
        """Who may answer, in words: "the principal ops or a token with the role approver"."""
        names = [a for a in self.approvers if not a.startswith(ROLE_PREFIX)]
        roles = [a[len(ROLE_PREFIX):] for a in self.approvers if a.startswith(ROLE_PREFIX)]
        parts = ([f"the principal{'s' if len(names) > 1 else ''} {', '.join(names)}"]
                 if names else [])
        if roles:
            parts.append(f"a token with the role {' or '.join(roles)}")
        return " or ".join(parts) or "nobody"


@dataclass(frozen=True)
class ApprovalPolicy:
    """The ``[approvals]`` default and the rules capabilities set for themselves."""

    default: ApprovalRule = ApprovalRule()
    capabilities: Mapping[str, ApprovalRule] = field(default_factory=dict)

    @classmethod
    def build(cls, approvers: tuple[str, ...] | None, self_approval: bool | None,
              capabilities: Mapping[str, tuple[tuple[str, ...] | None, bool | None]]
              ) -> ApprovalPolicy:
        """The policy of a configuration: the default rule (`approvers`, `self_approval`, None
        for the built-in defaults), and each capability's (approvers, self_approval), where
        None keeps the default's."""
        default = ApprovalRule(approvers or DEFAULT_APPROVERS, bool(self_approval))
        return cls(default, {
            name: ApprovalRule(names or default.approvers,
                               default.self_approval if own is None else own)
            for name, (names, own) in capabilities.items() if (names, own) != (None, None)})

    def rule(self, capability: str) -> ApprovalRule:
        return self.capabilities.get(capability, self.default)

    def approves_anything(self, caller: str, roles: Iterable[str]) -> bool:
        """Whether `caller` is an approver of some capability (so may learn that a run it does
        not own waits for an approval it may not answer)."""
        held = tuple(roles)
        return any(r.admits(caller, held) for r in (self.default, *self.capabilities.values()))

    def refusal(self, *, capability: str, owner: str, caller: str,
                roles: Iterable[str]) -> str | None:
        """None when `caller` (with a token of `roles`) may answer an approval of `capability`
        in a run of `owner`; otherwise why not and who may."""
        rule = self.rule(capability)
        if caller == owner:
            if rule.self_approval:
                return None
            return (f"{caller!r} owns the run and may not answer its own approval of "
                    f"{capability!r}; it may be answered by {rule.describe()} (or set "
                    "self_approval = true in the configuration's [approvals] table or the "
                    "capability's table)")
        if rule.admits(caller, tuple(roles)):
            return None
        return (f"{caller!r} may not answer an approval of {capability!r}; it may be answered "
                f"by {rule.describe()}")


__all__ = ["APPROVER_ROLE", "DEFAULT_APPROVERS", "DEFAULT_ROLE", "ROLE_PREFIX", "ApprovalPolicy",
           "ApprovalRule", "check_approver", "check_approvers", "check_role", "normalize_roles"]
