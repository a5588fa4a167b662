"""`IntakeWarning`: a finding about one tool that is reported, never a reason to reject it.

Not a public module: import `IntakeWarning` from `conduit_mcp.client`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from ._errors import PathItem, render_path

#: Every `IntakeWarning.code` this library produces, in one place. The codes are public API.
WARNING_CODES: Final = frozenset(
    {
        # server/tools "Tool Names" (SHOULD rules: warn, never reject)
        "tool_name_length",
        "tool_name_charset",
        # tool intake
        "input_schema_root_type",
        # a schema that fails its dialect's meta-schema (basic "JSON Schema Usage")
        "input_schema_invalid",
        "output_schema_invalid",
        "invisible_unicode",
        "control_characters",
        # proposed SEP-3140: a `contentHash` member that does not match the declaration
        "content_hash_mismatch",
        # basic "Icons": an icon `src` that is not https:/http: or a data:image/ URI
        "icon_unsafe_uri",
    }
)


@dataclass(frozen=True, slots=True)
class IntakeWarning:
    """A finding about one tool that is reported to the caller, never a reason to reject the tool.

    Used where the spec says SHOULD (e.g. 2026-07-28 server/tools "Tool Names"): a client reports
    the deviation and keeps the tool exactly as sent. Immutable and hashable (`details` takes no
    part in the hash, only in equality).

    Attributes:
        code: a short snake_case code from `WARNING_CODES`; match on this, not on `message`.
        path: keys and indexes from the root of the checked input to the value concerned
            (e.g. `("name",)` for a tool name); `()` for the root itself.
        message: one line for a person; names the place, never echoes the payload.
        details: extra machine-readable facts (e.g. `{"index": 6, "codepoint": "U+0020"}`),
            as a read-only mapping (a copy of what was passed).

    Raises:
        ValueError: on construction, when `code` is not in `WARNING_CODES` (a bug in this
            library, never caused by input).
    """

    code: str
    path: tuple[PathItem, ...]
    message: str
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.code not in WARNING_CODES:
            raise ValueError(f"unknown warning code {self.code!r}")
        # Copy both so a caller's later mutation cannot reach into a frozen warning.
        object.__setattr__(self, "path", tuple(self.path))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    @property
    def json_path(self) -> str:
        """`path` rendered as a string, e.g. `$.tools[3].name`."""
        return render_path(self.path)

    def with_prefix(self, *prefix: PathItem) -> IntakeWarning:
        """Return a copy whose path is `prefix + path` (paths are built by descent)."""
        return IntakeWarning(self.code, prefix + self.path, self.message, self.details)

    def __str__(self) -> str:
        return f"{self.code} at {self.json_path}: {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        # A mappingproxy does not pickle; rebuild from a plain dict.
        return (IntakeWarning, (self.code, self.path, self.message, dict(self.details)))
