"""The verdict types of `validate_structured` and `validate_arguments`.

Not a public module: import `OutputValidation` and `OutputIssue` from `conduit_mcp.client`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._errors import PathItem, render_path

Outcome = Literal["valid", "invalid", "skipped"]
"""`valid`: the value conforms; `invalid`: it does not (or cannot be checked against this
schema); `skipped`: nothing to validate (see `OutputValidation.skip_reason`)."""

IssueKind = Literal["instance", "schema", "protocol"]
"""`instance`: the value breaks a schema rule; `schema`: the schema itself cannot be applied
(invalid, or a `$ref` that is not resolved); `protocol`: an MCP rule outside the schema
(structuredContent missing, or not an object before 2026-07-28; arguments not an object)."""


@dataclass(frozen=True, slots=True)
class OutputIssue:
    """One reason a value (`structuredContent`, or a call's `arguments`) did not validate.

    Immutable and hashable.

    Attributes:
        path: keys and indexes from the root of the validated value to the offending value
            (`()` for the root, and for `schema` issues).
        message: one line for a person, worded by this library from the rule that failed; it
            names the place, the rule and the JSON type, never echoes the value (property
            names and schema values may appear).
        keyword: the JSON Schema keyword that failed (`"type"`, `"required"`, `"$ref"`, ...;
            `"false"` for a `false` subschema; `"structuredContent"` when it is missing;
            `"outputSchema"` / `"inputSchema"` when the schema could not be applied at all).
        schema_path: keys and indexes into the schema that led to the failing keyword
            (through `$ref` as written; for an invalid schema, the place in the schema).
        kind: `"instance"`, `"schema"` or `"protocol"` (see `IssueKind`).
    """

    path: tuple[PathItem, ...]
    message: str
    keyword: str
    schema_path: tuple[PathItem, ...] = ()
    kind: IssueKind = "instance"

    @property
    def json_path(self) -> str:
        """`path` rendered as a string rooted at the validated value, e.g. `$.items[2].id`."""
        return render_path(self.path)

    def __str__(self) -> str:
        return f"{self.json_path}: {self.message}"


@dataclass(frozen=True, slots=True)
class OutputValidation:
    """The outcome of validating one value against a tool's schema. Immutable and hashable.

    A failed validation is a report, not an `Error`: what to do with an `invalid` value
    (withhold a result, refuse a call, show it with a warning) is the caller's policy.

    Attributes:
        outcome: `"valid"`, `"invalid"` or `"skipped"`.
        errors: the issues, sorted by path, then keyword (then schema path, then message); empty
            unless `outcome` is `"invalid"`.
        dialect: the canonical `$schema` URI validation used, or `None` when skipped before a
            schema was looked at.
        skip_reason: why validation was skipped: `"is_error"` (the tool failed: its
            structuredContent, if any, is not bound by the schema), `"no_output_schema"`, or
            `"not_in_protocol_version"` (before 2025-06-18); `None` unless skipped.
        truncated: more than `MAX_ISSUES` issues were found; `errors` holds the first ones.
    """

    outcome: Outcome
    errors: tuple[OutputIssue, ...] = ()
    dialect: str | None = None
    skip_reason: str | None = None
    truncated: bool = False

    @property
    def valid(self) -> bool:
        """`True` only when `outcome` is `"valid"`."""
        return self.outcome == "valid"
