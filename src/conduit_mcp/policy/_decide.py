"""Who may list and call which tool: a checked policy evaluated for one caller.

Not a public module: `Policy`, `PolicyView`, `Caller` and `Decision` are exported by
`conduit_mcp.policy`. A caller's view (the rules that apply to it, their deny globs and their
allow globs indexed by server id: `_globs.GlobSet`) is made once per distinct caller and
kept in a bounded table; a decision is then two dict lookups and a few regular-expression
matches, whatever the number of rules (`bench/policy.py` measures it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._file import ParsedPolicy, PolicyRule, parse_text, read_file
from ._globs import SEPARATOR, GlobSet

#: The most callers whose views a `Policy` keeps (the table is emptied when full): memory
#: follows the callers active now, never every caller seen.
MAX_VIEWS: Final = 4096


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: what an authenticated token says about its bearer. Immutable.

    Attributes:
        subject: the token's `sub`, or `None`.
        groups: the groups of the token's groups claim (`--groups-claim`, default `"groups"`).
        claims: the token's other claims (names to JSON values) a policy may name.
    """

    subject: str | None = None
    groups: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any], groups_claim: str = "groups") -> Caller:
        """The caller a verified token's claims describe: `sub` (when a string), the strings
        of `groups_claim` (a list of strings, or one string), and every claim.

        Args:
            claims: the token's claims (JSON values), already verified.
            groups_claim: the claim holding the groups (`--groups-claim`).
        """
        subject = claims.get("sub")
        raw = claims.get(groups_claim)
        if isinstance(raw, str):
            groups = frozenset({raw})
        elif isinstance(raw, list):
            groups = frozenset(g for g in raw if isinstance(g, str))
        else:
            groups = frozenset()
        return cls(subject if isinstance(subject, str) else None, groups, dict(claims))


#: Every `Decision.reason`.
DECISION_REASONS: Final = frozenset(
    {"allowed_by_rule", "denied_by_rule", "allowed_by_default", "denied_by_default"}
)


@dataclass(frozen=True, slots=True)
class Decision:
    """What a policy says of one tool for one caller. Immutable.

    Attributes:
        allowed: whether the caller may see the tool listed and call it.
        reason: `"denied_by_rule"` (a deny glob of a rule that applies to the caller matched:
            deny beats allow), `"allowed_by_rule"`, `"denied_by_default"` or
            `"allowed_by_default"` (no rule decided: the policy's `default`).
        rule: the rule that decided, or `None` for the default.
        glob: the glob of that rule that matched, or `None`.
    """

    allowed: bool
    reason: str
    rule: PolicyRule | None = None
    glob: str | None = None

    def explain(self) -> str:
        """One line for the caller and the logs, e.g. `"denied by rule 1 (line 3):
        */delete_*"` or `"not allowed: no rule allows it (default deny)"`."""
        if self.rule is not None:
            verb = "allowed" if self.allowed else "denied"
            return f"{verb} by {self.rule.where}: {self.glob}"
        if self.allowed:
            return "allowed: no rule decides it (default allow)"
        return "not allowed: no rule allows it (default deny)"


class PolicyView:
    """One caller's view of a `Policy`: `decide` per tool. Made by `Policy.view`.

    Attributes:
        rules: the rules that apply to the caller, in file order.
    """

    __slots__ = ("_allow", "_default", "_deny", "rules")

    def __init__(self, rules: tuple[PolicyRule, ...], default: Decision) -> None:
        self.rules = rules
        self._default = default
        self._deny = GlobSet(
            [(Decision(False, "denied_by_rule", r, g), g) for r in rules for g in r.deny]
        )
        self._allow = GlobSet(
            [(Decision(True, "allowed_by_rule", r, g), g) for r in rules for g in r.allow]
        )

    def decide(self, server_id: str, tool: str) -> Decision:
        """The decision for `tool` of `server_id`: a deny glob of any rule that applies wins,
        then an allow glob, then the default.

        Args:
            server_id: the operator-assigned server id (a server id holding U+0000 is
                denied: no glob can name it).
            tool: the tool name as the server sent it (any text).

        Returns:
            A `Decision` (the same object for the same rule and glob).
        """
        if SEPARATOR in server_id:
            return _UNNAMEABLE
        return (
            self._deny.find(server_id, tool) or self._allow.find(server_id, tool) or (self._default)
        )

    def allows(self, server_id: str, tool: str) -> bool:
        """`decide(server_id, tool).allowed`."""
        return self.decide(server_id, tool).allowed


_UNNAMEABLE: Final = Decision(False, "denied_by_default")


class Policy:
    """A checked policy: per subject, group or claim, which SERVER_ID/TOOL may be listed and
    called (globs; deny beats allow; a default for what no rule decides).

    Build one with `Policy.parse(text)` or `Policy.load(path)`; a policy kept in a pin store
    comes back through `PinStore.policy()` with its `version`. Thread-safe to share: views
    are immutable and the table of views is replaced, never mutated under a reader.

    Attributes:
        source: the file name it was read from (or `"<policy>"`).
        text: the TOML text as given.
        digest: `"sha256:"` + hex SHA-256 of the UTF-8 text.
        default: `"allow"` or `"deny"`.
        rules: the `PolicyRule`s in file order.
        version: the store's version number of this policy, or `None` when not from a store.

    Spec: none (conduit-defined); a tool outside a caller's policy is withheld from its
    `tools/list` (MCP server/tools "User Interaction Model": which tools are exposed).
    """

    def __init__(self, parsed: ParsedPolicy, *, version: int | None = None) -> None:
        self.source = parsed.source
        self.text = parsed.text
        self.digest = parsed.digest
        self.default = parsed.default
        self.rules = parsed.rules
        self.version = version
        self._default = Decision(
            parsed.default == "allow",
            "allowed_by_default" if parsed.default == "allow" else "denied_by_default",
        )
        self._everyone = tuple(r for r in self.rules if r.everyone)
        self._claims_only = tuple(
            r for r in self.rules if r.claims and not (r.subjects or r.groups or r.everyone)
        )
        self._by_subject: dict[str, list[PolicyRule]] = {}
        self._by_group: dict[str, list[PolicyRule]] = {}
        for rule in self.rules:
            for subject in rule.subjects:
                self._by_subject.setdefault(subject, []).append(rule)
            for group in rule.groups:
                self._by_group.setdefault(group, []).append(rule)
        self._claim_names = tuple(sorted({name for r in self.rules for name in r.claims}))
        self._views: dict[tuple[Any, ...], PolicyView] = {}

    @classmethod
    def parse(cls, text: str, source: str = "<policy>", *, version: int | None = None) -> Policy:
        """A policy from TOML `text`.

        Args:
            text: the policy file's text (`default = "deny"`, `[[rule]]` tables with
                `subjects` / `groups` / `claims` / `everyone` and `allow` / `deny` globs).
            source: the name used in errors (`"policy.toml"`).
            version: the store's version number, when it comes from a store.

        Raises:
            PolicyError: one line, `SOURCE:LINE: PROBLEM` (bad TOML, an unknown key, a value
                of the wrong kind, a glob without `/`, a rule that applies to nobody).
        """
        return cls(parse_text(text, source), version=version)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """A policy from the TOML file at `path` (at most 1 MiB, UTF-8).

        Raises:
            PolicyError: as `parse`, or line 1 when the file cannot be read.
        """
        return cls(read_file(path))

    def view(self, caller: Caller) -> PolicyView:
        """The view of `caller`: the rules that apply to it, compiled (kept per distinct
        caller, at most `MAX_VIEWS`)."""
        claims = tuple(_claim_value(caller.claims.get(name)) for name in self._claim_names)
        signature = (caller.subject, caller.groups, claims)
        view = self._views.get(signature)
        if view is None:
            view = PolicyView(self._applying(caller), self._default)
            views = self._views if len(self._views) < MAX_VIEWS else {}
            views[signature] = view
            self._views = views
        return view

    def decide(self, caller: Caller, server_id: str, tool: str) -> Decision:
        """`view(caller).decide(server_id, tool)`."""
        return self.view(caller).decide(server_id, tool)

    def _applying(self, caller: Caller) -> tuple[PolicyRule, ...]:
        candidates: dict[int, PolicyRule] = {r.number: r for r in self._everyone}
        if caller.subject is not None:
            candidates.update((r.number, r) for r in self._by_subject.get(caller.subject, ()))
        for group in caller.groups:
            candidates.update((r.number, r) for r in self._by_group.get(group, ()))
        candidates.update((r.number, r) for r in self._claims_only)
        return tuple(rule for _, rule in sorted(candidates.items()) if _applies(rule, caller))

    def __repr__(self) -> str:
        return (
            f"Policy({self.source!r}, version={self.version}, default={self.default!r},"
            f" rules={len(self.rules)})"
        )


def _claim_value(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else None


def _values(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _applies(rule: PolicyRule, caller: Caller) -> bool:
    if rule.subjects and caller.subject not in rule.subjects:
        return False
    if rule.groups and rule.groups.isdisjoint(caller.groups):
        return False
    for name, accepted in rule.claims.items():
        if accepted.isdisjoint(_values(caller.claims.get(name))):
            return False
    return True
