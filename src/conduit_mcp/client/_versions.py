"""MCP protocol revisions this library knows, and their order.

Not a public module. A caller passes the *negotiated* protocol version (from `initialize`, or the
per-request `_meta` protocol version on 2026-07-28); behaviour that changed between revisions
is gated with `supports(version, rule)` on the one table `SINCE`.

Decision: an unknown version string is refused (`unknown_protocol_version`) rather than ordered
by string comparison. A later dated revision may change the very rules this library gates on
(e.g. `resultType` values), so guessing "newer than everything we know" would be unsafe.
"""

from __future__ import annotations

from typing import Final, Literal

from conduit_mcp_wire import LATEST, VERSIONS

from ._errors import Error

#: Every protocol revision this library knows, oldest first: `conduit_mcp_wire.VERSIONS`, which
#: the generator takes from schema/PINNED.json (the one registry; a spec bump adds a pin there).
#: `"draft"` (the unreleased next revision, schema/draft/) sorts after every dated revision.
KNOWN_VERSIONS: Final = VERSIONS

# `LATEST` (re-exported): the newest released revision, `conduit_mcp_wire.LATEST`, the last
# dated pin in schema/PINNED.json.
__all__ = [
    "KNOWN_VERSIONS",
    "LATEST",
    "SINCE",
    "Rule",
    "at_least",
    "check_version",
    "supports",
    "version_at_least",
    "version_supports",
]

#: A behaviour of the protocol that changed between revisions.
Rule = Literal[
    "output_schema",
    "json_schema_2020_12_default",
    "structured_content_any_json",
    "result_type",
    "x_mcp_header",
]

#: Each rule -> the first revision it holds in: the one table every "since version X" rule of
#: this library reads (a spec bump that moves a rule changes one line here).
SINCE: Final[dict[Rule, str]] = {
    # `Tool.outputSchema` and `CallToolResult.structuredContent` (2025-06-18 server/tools).
    "output_schema": "2025-06-18",
    # A schema without `$schema` is JSON Schema 2020-12 (2025-11-25 basic "JSON Schema Usage").
    "json_schema_2020_12_default": "2025-11-25",
    # `structuredContent` may be any JSON value, not only an object (2026-07-28 server/tools).
    "structured_content_any_json": "2026-07-28",
    # Results carry `resultType` (2026-07-28 basic "Result types").
    "result_type": "2026-07-28",
    # `x-mcp-header` and the Mcp-Name / Mcp-Param-{Name} headers (2026-07-28 basic/transports).
    "x_mcp_header": "2026-07-28",
}

_RANK: Final = {version: rank for rank, version in enumerate(KNOWN_VERSIONS)}


def check_version(version: object) -> str:
    """Return `version` if it is a protocol revision this library knows.

    Args:
        version: the negotiated protocol version, e.g. `"2025-11-25"`.

    Returns:
        `version`, unchanged.

    Raises:
        TypeError: `version` is not a `str` (a caller bug).
        Error: kind `"policy"`, reason `"unknown_protocol_version"`, path `()`, when `version`
            is a string not in `KNOWN_VERSIONS` (the string is in `details["version"]`,
            truncated to 64 characters).

    Spec: 2026-07-28 basic/versioning (revisions are `YYYY-MM-DD` strings).
    """
    if type(version) is not str:
        if not isinstance(version, str):
            raise TypeError(f"protocol_version must be a str, got {type(version).__name__}")
    if version not in _RANK:
        raise Error(
            "policy",
            "unknown_protocol_version",
            f"unknown protocol version (known: {', '.join(KNOWN_VERSIONS)})",
            details={"version": version[:64], "known": list(KNOWN_VERSIONS)},
        )
    return version


def at_least(version: str, other: str) -> bool:
    """Whether revision `version` is `other` or later.

    Args:
        version: the negotiated protocol version.
        other: a revision from `KNOWN_VERSIONS` (a literal in this library's code).

    Returns:
        `True` when `version` sorts at or after `other` (`"draft"` after every dated revision).

    Raises:
        TypeError: `version` is not a `str`.
        Error: reason `"unknown_protocol_version"` when `version` is not a known revision
            (see `check_version`).
        ValueError: `other` is not a known revision (a bug in this library).
    """
    rank = _RANK.get(version) if type(version) is str else None
    if rank is None:
        rank = _RANK[check_version(version)]
    other_rank = _RANK.get(other)
    if other_rank is None:
        raise ValueError(f"unknown protocol version {other!r}")
    return rank >= other_rank


#: The public name of `at_least` (exported from `conduit_mcp.client`): the same function.
version_at_least = at_least


def supports(version: str, rule: Rule) -> bool:
    """Whether revision `version` has behaviour `rule` (its `SINCE` revision or later).

    Args:
        version: the negotiated protocol version.
        rule: a key of `SINCE`.

    Returns:
        `True` when `version` is `SINCE[rule]` or later.

    Raises:
        TypeError, Error: as `at_least` for a `version` that is not a known revision.
        KeyError: `rule` is not a key of `SINCE` (a bug in this library).
    """
    return at_least(version, SINCE[rule])


#: The public name of `supports` (exported from `conduit_mcp.client`): the same function.
version_supports = supports
