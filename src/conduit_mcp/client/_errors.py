"""The one error type of conduit-mcp, its kinds and its reason codes.

Not a public module: import `Error` from `conduit_mcp.client`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

ErrorKind = Literal["protocol", "transport", "policy"]
"""Who is at fault: the peer broke the protocol, the connection failed, or a local rule said no."""

KINDS: Final = frozenset({"protocol", "transport", "policy"})

PathItem = str | int
"""One step into a JSON value: an object key (str) or an array index (int)."""

#: Every `Error.reason` this library produces, mapped to the one kind it always has (a reason
#: implies its kind; `Error` refuses any other pairing). Read-only; the codes and their kinds are
#: public API (CHANGELOG.md lists them). `reason in REASONS` works as on a set.
REASONS: Final[Mapping[str, ErrorKind]] = MappingProxyType(
    {
        # foundation (Tool / ToolResult / strict conformance)
        "invalid_tool": "protocol",
        "invalid_tool_result": "protocol",
        "schema_violation": "protocol",
        # A revision this library does not know: the spec lets a server answer any version it
        # supports (basic/lifecycle "Version Negotiation"); refusing it is this library's rule.
        "unknown_protocol_version": "policy",
        # tool intake
        "invalid_tools_list": "protocol",
        "duplicate_tool_name": "protocol",
        "x_mcp_header_invalid_name": "protocol",
        "x_mcp_header_duplicate": "protocol",
        "x_mcp_header_type": "protocol",
        "x_mcp_header_unreachable": "protocol",
        "header_value_unencodable": "policy",
        # results
        "invalid_result_type": "protocol",
        "unsupported_schema_dialect": "protocol",
        # resource limits (`details["limit"]` is always an int)
        "limit_exceeded": "policy",
        # not JSON: bad JSON text, or a Python value JSON cannot hold (a cycle included)
        "invalid_json": "protocol",
        # adapters (a model called a tool name no ToolNameMap gave out)
        "unmapped_tool_name": "policy",
    }
)

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def render_path(path: tuple[PathItem, ...]) -> str:
    """Render a path as a JSONPath-like string rooted at `$`.

    Args:
        path: keys (str) and indexes (int) from the root of the input.

    Returns:
        e.g. `$.tools[3].inputSchema`; keys that are not plain identifiers are quoted
        (`$.properties["x-mcp-header"]`), with JSON string escaping.
    """
    import json

    parts = ["$"]
    for item in path:
        if isinstance(item, int) and not isinstance(item, bool):
            parts.append(f"[{item}]")
        elif isinstance(item, str) and _PLAIN_KEY.match(item):
            parts.append(f".{item}")
        else:
            parts.append(f"[{json.dumps(str(item), ensure_ascii=True)}]")
    return "".join(parts)


def json_type_name(value: object) -> str:
    """Name the JSON type of a value, for messages that name the place, not the payload.

    Returns one of `null`, `boolean`, `integer`, `number`, `string`, `array`, `object`,
    or the Python type name for a value JSON cannot hold.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class Error(Exception):
    """A protocol, transport or policy failure, with a stable reason code and a path into the input.

    A tool that failed is *not* an `Error`: the spec (server/tools "Error Handling") has tools
    report execution errors in-band, which `ToolResult.is_error` carries.

    Attributes:
        kind: `"protocol"` (the peer sent something the spec does not allow), `"transport"`
            (the connection failed) or `"policy"` (a local rule refused it); always
            `REASONS[reason]`: a reason implies its kind.
        reason: a short snake_case code from `REASONS`; match on this, not on `message`.
        message: one line for a person; names the place and the JSON types, never the payload.
        path: keys and indexes from the root of the offending input to the offending value;
            `()` for the root itself.
        details: extra machine-readable facts (e.g. `{"expected": "string", "got": "integer"}`),
            as a read-only mapping (a copy of what was passed).

    Raises:
        ValueError: on construction, when `kind` is not one of the three kinds, `reason` is
            not a known code, or `kind` is not the kind `REASONS` gives `reason` (a bug in this
            library, never caused by input).
    """

    kind: ErrorKind
    reason: str
    message: str
    path: tuple[PathItem, ...]
    details: Mapping[str, Any]

    def __init__(
        self,
        kind: ErrorKind,
        reason: str,
        message: str,
        *,
        path: tuple[PathItem, ...] = (),
        details: Mapping[str, Any] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        implied = REASONS.get(reason)
        if implied is None:
            raise ValueError(f"unknown error reason {reason!r}")
        if kind != implied:
            raise ValueError(f"reason {reason!r} is of kind {implied!r}, not {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.reason = reason
        self.message = message
        self.path = tuple(path)
        # A copy behind a read-only view: a caller's later mutation cannot reach in.
        self.details = MappingProxyType(dict(details) if details else {})

    @property
    def json_path(self) -> str:
        """`path` rendered as a string, e.g. `$.tools[3].inputSchema`."""
        return render_path(self.path)

    def with_prefix(self, *prefix: PathItem) -> Error:
        """Return a copy whose path is `prefix + path` (paths are built by descent)."""
        return Error(
            self.kind, self.reason, self.message, path=prefix + self.path, details=self.details
        )

    def __str__(self) -> str:
        return f"{self.kind}/{self.reason} at {self.json_path}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"Error(kind={self.kind!r}, reason={self.reason!r}, message={self.message!r}, "
            f"path={self.path!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions with keyword-only arguments do not pickle by default.
        # A mappingproxy does not pickle; rebuild from a plain dict.
        details = dict(self.details)
        return (_rebuild, (self.kind, self.reason, self.message, self.path, details))


def _rebuild(
    kind: ErrorKind, reason: str, message: str, path: tuple[PathItem, ...], details: dict[str, Any]
) -> Error:
    return Error(kind, reason, message, path=path, details=details)


def type_error(reason: str, path: tuple[PathItem, ...], expected: str, value: object) -> Error:
    """Build the protocol `Error` for a value of the wrong JSON type at `path`."""
    got = json_type_name(value)
    # The message names the place relative to the object checked (`inputSchema must be …`);
    # `Error.json_path` gives the full path, which callers may prefix as they descend.
    where = f"{path[-1]}" if path else "the value"
    return Error(
        "protocol",
        reason,
        f"{where} must be {expected}, got {got}",
        path=path,
        details={"expected": expected, "got": got},
    )


def cycle_error(path: tuple[PathItem, ...]) -> Error:
    """Build the one `Error` for a Python value that contains itself (a reference cycle).

    No JSON parser produces a cycle, so only a caller's hand-built value holds one; every walker
    of this library treats it the same way: kind `"protocol"`, reason `"invalid_json"` (a value
    JSON cannot hold, as a NaN or a set), `path` to the container met again inside itself,
    `details` `{"expected": "a JSON value", "got": "cycle"}`. Never a hang, a `RecursionError`,
    a `ValueError` or a placeholder string. Shared, acyclic sub-values are not cycles.
    """
    return Error(
        "protocol",
        "invalid_json",
        f"{render_path(path)} contains itself (a reference cycle), which JSON cannot hold",
        path=path,
        details={"expected": "a JSON value", "got": "cycle"},
    )
