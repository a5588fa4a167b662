"""A policy file read and checked: TOML text to `PolicyRule`s, or one `PolicyError` line.

Not a public module: `parse_policy` and `load_policy` are exported by `conduit_mcp.policy`.
Every problem is reported as `FILE:LINE: what is wrong`, the line found in the text (TOML's
own errors carry it; for a value of the wrong kind the line of its key inside its `[[rule]]`).
Unknown keys are errors: a misspelt `deny` must not read as no denial.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ._globs import check_glob

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: The largest policy file read, in bytes: a policy is written by people.
MAX_POLICY_BYTES: Final = 1 << 20

_TOP_KEYS: Final = frozenset({"default", "rule"})
_SELECTORS: Final = ("subjects", "groups", "claims", "everyone")
_RULE_KEYS: Final = frozenset({*_SELECTORS, "allow", "deny"})
_TOML_LINE: Final = re.compile(r"\(at line (\d+), column \d+\)")
_RULE_HEADER: Final = re.compile(r"^\s*\[\[\s*(?:rule|\"rule\"|'rule')\s*\]\]")
_TABLE_HEADER: Final = re.compile(r"^\s*\[")


class PolicyError(ValueError):
    """A policy file that cannot be used: where and why, in one line.

    Attributes:
        source: the file's name as given (or `"<policy>"`).
        line: the 1-based line of the problem (`1` when it concerns the whole file).
        problem: what is wrong, for a person.

    `str(error)` is `"SOURCE:LINE: PROBLEM"`.
    """

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """One `[[rule]]` of a policy. Immutable.

    Attributes:
        number: its position in the file, from 1.
        line: the line of its `[[rule]]` header.
        subjects: token subjects (`sub`) it applies to, exactly.
        groups: groups it applies to (any one of them in the caller's groups).
        claims: other claims it applies to: claim name -> accepted values (the claim's value,
            or one element of it when it is a list, equals one of them).
        everyone: `everyone = true`: it applies to every caller.
        allow, deny: SERVER_ID/TOOL globs it allows and denies.

    A rule applies to a caller who matches every kind of selector it names (subjects, groups,
    claims: all that are given), and within a kind any one value.
    """

    number: int
    line: int
    subjects: frozenset[str]
    groups: frozenset[str]
    claims: Mapping[str, frozenset[str]]
    everyone: bool
    allow: tuple[str, ...]
    deny: tuple[str, ...]

    @property
    def where(self) -> str:
        """`"rule N (line L)"`, for reasons."""
        return f"rule {self.number} (line {self.line})"


@dataclass(frozen=True, slots=True)
class ParsedPolicy:
    """What a policy file says, checked (the input of `Policy`)."""

    source: str
    text: str
    digest: str
    default: str
    rules: tuple[PolicyRule, ...]


def parse_text(text: str, source: str = "<policy>") -> ParsedPolicy:
    """Check the TOML policy `text` (named `source` in errors).

    Raises:
        PolicyError: the first problem, as `SOURCE:LINE: PROBLEM`.
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_POLICY_BYTES:
        raise PolicyError(source, 1, f"larger than {MAX_POLICY_BYTES} bytes")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_LINE.search(message)
        if found:
            line = int(found.group(1))
        else:  # "(at end of document)"
            line = max(1, len(text.splitlines()))
        problem = _TOML_LINE.sub("", message).replace("(at end of document)", "").strip()
        raise PolicyError(source, line, "not TOML: " + problem) from None
    lines = text.splitlines()
    locate = _Locator(lines)
    for name in data:
        if name not in _TOP_KEYS:
            raise PolicyError(
                source, locate.top(name), f"unknown key {name!r} (expected default, [[rule]])"
            )
    default = data.get("default", "deny")
    if default not in ("allow", "deny"):
        raise PolicyError(
            source, locate.top("default"), f'default must be "allow" or "deny", not {default!r}'
        )
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
        raise PolicyError(source, locate.top("rule"), "rule must be an array of tables ([[rule]])")
    rules = tuple(
        _rule(number, raw, source, locate) for number, raw in enumerate(raw_rules, start=1)
    )
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return ParsedPolicy(source, text, digest, default, rules)


def read_file(path: str | Path) -> ParsedPolicy:
    """Read and check the policy file at `path`.

    Raises:
        PolicyError: the file cannot be read (line 1), is not UTF-8, or has a problem.
    """
    source = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyError(source, 1, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PolicyError(source, line, "not UTF-8 text") from None
    return parse_text(text, source)


class _Locator:
    """Finds the line of a key at the top level or inside the N-th `[[rule]]`."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._rules = [i for i, line in enumerate(lines) if _RULE_HEADER.match(line)]
        first_table = next((i for i, line in enumerate(lines) if _TABLE_HEADER.match(line)), None)
        self._top_end = len(lines) if first_table is None else first_table

    def _find(self, start: int, end: int, name: str) -> int | None:
        pattern = re.compile(
            rf"^\s*(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')\s*[.=]"
        )
        for i in range(start, end):
            if pattern.match(self._lines[i]):
                return i + 1
        return None

    def top(self, name: str) -> int:
        if name == "rule" and self._rules:
            return self._rules[0] + 1
        return self._find(0, self._top_end, name) or 1

    def rule(self, number: int, name: str | None = None) -> int:
        if number > len(self._rules):  # an inline array of tables: no header to point at
            return self.top("rule")
        start = self._rules[number - 1]
        if name is None:
            return start + 1
        end = self._rules[number] if number < len(self._rules) else len(self._lines)
        return self._find(start + 1, end, name) or start + 1


def _strings(value: Any, what: str, fail: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        fail(f"{what} must be a list of non-empty strings")
    return tuple(value)


def _rule(number: int, raw: dict[str, Any], source: str, locate: _Locator) -> PolicyRule:
    def fail(problem: str, key: str | None = None) -> Any:
        raise PolicyError(source, locate.rule(number, key), f"rule {number}: {problem}")

    for name in raw:
        if name not in _RULE_KEYS:
            fail(
                f"unknown key {name!r} (expected subjects, groups, claims, everyone, allow,"
                " deny)",
                name,
            )
    if not any(name in raw for name in _SELECTORS):
        fail("names no subjects, groups, claims or everyone = true: whom does it apply to?")
    if not ("allow" in raw or "deny" in raw):
        fail("has neither allow nor deny")
    subjects = _strings(raw.get("subjects", []), "subjects", lambda p: fail(p, "subjects"))
    groups = _strings(raw.get("groups", []), "groups", lambda p: fail(p, "groups"))
    everyone = raw.get("everyone", False)
    if not isinstance(everyone, bool):
        fail("everyone must be true or false", "everyone")
    claims: dict[str, frozenset[str]] = {}
    raw_claims = raw.get("claims", {})
    if not isinstance(raw_claims, dict):
        fail('claims must be a table: claim = "value" or ["values"]', "claims")
    for claim, accepted in raw_claims.items():
        if isinstance(accepted, str):
            accepted = [accepted]
        if claim in ("sub", "groups"):
            fail(f"claims.{claim}: use subjects / groups", "claims")
        claims[claim] = frozenset(
            _strings(accepted, f"claims.{claim}", lambda p: fail(p, "claims"))
        )
    allow = _strings(raw.get("allow", []), "allow", lambda p: fail(p, "allow"))
    deny = _strings(raw.get("deny", []), "deny", lambda p: fail(p, "deny"))
    for key_name, globs in (("allow", allow), ("deny", deny)):
        for glob in globs:
            problem = check_glob(glob)
            if problem is not None:
                fail(f"{key_name}: {problem}", key_name)
    if raw.get("everyone") is False and not (subjects or groups or claims):
        fail("everyone = false and no other selector: it applies to nobody", "everyone")
    if ("subjects" in raw and not subjects) or ("groups" in raw and not groups):
        fail("an empty subjects or groups list applies to nobody")
    return PolicyRule(
        number,
        locate.rule(number),
        frozenset(subjects),
        frozenset(groups),
        claims,
        everyone,
        allow,
        deny,
    )
