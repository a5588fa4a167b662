"""`validate_structured` and `validate_arguments`: a tool's values against its JSON Schemas.

Not a public module: import `validate_structured`, `validate_arguments`, `OutputValidation` and
`OutputIssue` from `conduit_mcp.client`.

Dialects (spec 2026-07-28 basic "JSON Schema Usage" asks implementations to document them):
JSON Schema draft-07, 2019-09 and 2020-12, chosen by the schema's `$schema`; any other `$schema`
is refused with `unsupported_schema_dialect`. Without `$schema`: 2020-12 on protocol 2025-11-25
and later (the spec's default); draft-07 on earlier revisions, whose spec names no default
(their own schema.json is draft-07, and draft-07 is what servers of that time emitted: a
draft-07 schema read as 2020-12 can be rejected, e.g. array-form `items`). `format` is an
annotation only (never asserted), in every dialect. `pattern` follows ECMA-262 as JSON Schema
specifies (`\\d` and `\\w` are ASCII; `\\p{L}` works), in linear time unless the pattern needs
backtracking (lookaround, back-references), which is bounded by the regex engine's step limit.

The engine is jsonschema-rs (`_engine.py`): schemas are compiled once, cached by content, never
retrieve anything, and every message is worded here.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from . import _wire as w
from ._dialects import DRAFT_07, DRAFT_2020_12, SUPPORTED_DIALECTS
from ._engine import (
    CACHE_SIZE,
    FRONT,
    MAX_ISSUES,
    MAX_NESTING_WORK,
    MAX_SCHEMA_BYTES,
    META_VERDICTS,
    cache_size,
    check_depth,
    clear_cache,
    collect,
    compiled,
    is_panic,
    issue_key,
    meta_problem,
)
from ._errors import Error, json_type_name
from ._jsonrules import MISSING
from ._result import ToolResult
from ._tool import Tool
from ._verdict import IssueKind, Outcome, OutputIssue, OutputValidation
from ._versions import KNOWN_VERSIONS, SINCE, check_version, supports
from ._warnings import IntakeWarning

__all__ = [
    "CACHE_SIZE",
    "MAX_ISSUES",
    "MAX_NESTING_WORK",
    "MAX_SCHEMA_BYTES",
    "IssueKind",
    "Outcome",
    "OutputIssue",
    "OutputValidation",
    "clear_validator_cache",
    "schema_warnings",
    "validate_arguments",
    "validate_structured",
    "validator_cache_size",
]


def _spellings(canonical: str) -> list[str]:
    # http or https, with or without the empty fragment: all name the same meta-schema.
    bare = canonical.rstrip("#").split("://", 1)[1]
    return [
        f"{scheme}://{bare}{fragment}" for scheme in ("http", "https") for fragment in ("", "#")
    ]


_DIALECT_BY_URI: Final = {
    uri: canonical for canonical in SUPPORTED_DIALECTS for uri in _spellings(canonical)
}

# Validation starts at protocol 2025-06-18 (server/tools "Output Schema" appears there).

# Per known revision, computed once: (outputSchema exists, default dialect, any JSON allowed).
_BY_VERSION: Final = {
    version: (
        supports(version, "output_schema"),
        DRAFT_2020_12 if supports(version, "json_schema_2020_12_default") else DRAFT_07,
        supports(version, "structured_content_any_json"),
    )
    for version in KNOWN_VERSIONS
}

_SCHEMA_KEY: Final = "$schema"
# The common verdict, built once per dialect (the warm path allocates nothing).
_VALID: Final = {
    dialect: OutputValidation("valid", dialect=dialect) for dialect in SUPPORTED_DIALECTS
}


def clear_validator_cache() -> None:
    """Drop every cached compiled schema (for tests and benchmarks)."""
    clear_cache()


def validator_cache_size() -> int:
    """How many compiled schemas are cached now (at most `CACHE_SIZE`)."""
    return cache_size()


def validate_structured(
    result: ToolResult, tool: Tool, *, protocol_version: str
) -> OutputValidation:
    """Validate `result.structured` against `tool`'s `outputSchema`.

    Rules, in order:
    - before protocol 2025-06-18 (no `outputSchema` in the protocol): `skipped`;
    - `result.is_error`: `skipped` (a failed tool reports its error, not its output);
    - the tool has no `outputSchema` (absent or `null`): `skipped`;
    - the schema's dialect is resolved (see the module docstring);
    - `structuredContent` absent: `invalid` (presence is the test: `0`, `false`, `""`, `[]`
      and `null` are present and validated);
    - before 2026-07-28, `structuredContent` that is not an object: `invalid` (a `protocol`
      issue), and the schema is still applied;
    - otherwise the schema's verdict. An outputSchema that is not a valid schema of its
      dialect, or a `$ref` outside the schema, makes the outcome `invalid` with a `schema`
      issue (the spec: such schemas SHOULD be rejected, not treated as permissive).

    Only `structuredContent` is validated, never the rest of the result, and nothing is
    changed: no stripping of unknown keys, no coercion, no defaults (integers of any size are
    compared exactly). A `$ref` resolves only inside the schema (`#...`, `$defs`,
    `definitions`, `$id`-scoped) and the bundled JSON Schema meta-schemas; nothing is ever
    retrieved (no network, no file), whatever the URI.

    Compiled schemas are cached, at most `CACHE_SIZE`: by the schema dict itself (the warm
    path; `Tool.from_wire` hands `raw` over, so a schema dict is not changed in place after it;
    a changed top-level member count is noticed, a deeper in-place edit needs
    `clear_validator_cache()`), and by content (dialect + the schema's JSON bytes in member
    order, exact), so equal schemas in different dicts and tools share one validator.
    Thread-safe.

    Args:
        result: the completed call's result.
        tool: the tool that was called (its `outputSchema` is used).
        protocol_version: the negotiated protocol revision (e.g. `"2026-07-28"`).

    Returns:
        The `OutputValidation`; issue paths are into `structuredContent`.

    Raises:
        TypeError: `result` is not a `ToolResult`, `tool` is not a `Tool`, `protocol_version`
            is not a `str`, or the outputSchema holds a value JSON cannot represent (caller
            bugs).
        Error: kind `"policy"`, reason `"unknown_protocol_version"` when `protocol_version` is
            not a known revision. Kind `"protocol"`:
            reason `"invalid_tool"`, path `("outputSchema",)`, when the tool's `outputSchema`
            is neither an object nor `null`;
            reason `"unsupported_schema_dialect"`, path `("outputSchema", "$schema")`, when
            `$schema` is present and not a string naming draft-07, 2019-09 or 2020-12.
            Kind `"policy"`, reason `"limit_exceeded"`:
            path `("outputSchema",)` when the schema's canonical JSON exceeds
            `MAX_SCHEMA_BYTES` or it is nested too deeply to compile;
            path `("structuredContent",)` when the value is too deep for this schema: for a
            schema whose `$ref`s can loop, (value depth) x (schema depth) above
            `MAX_NESTING_WORK`; or the engine's recursion limit when comparing deeply nested
            values (`uniqueItems`, `enum`, `const`). A schema that cannot loop takes any depth.

    Total: per warm call, O(1) plus validation in Rust; a new schema dict adds a digest and an
    equality check O(schema size), a new schema a compile O(schema size). Patterns run in
    linear time, or bounded by the regex engine's backtracking limit (then a `schema` issue).
    Only `Error` and the `TypeError`s above leave this function: engine exceptions and panics
    are mapped.

    Spec: 2026-07-28 server/tools "Output Schema" ("Servers MUST provide structured results
    that conform to this schema. Clients SHOULD validate structured results against this
    schema."); server/tools "Structured Content" (any JSON value on 2026-07-28; a JSON object
    in 2025-06-18 and 2025-11-25); basic "JSON Schema Usage" ("Schema Dialect", "$ref
    Resolution": MUST NOT automatically dereference network `$ref`s).

    >>> tool = Tool.from_wire("s", {"name": "t", "inputSchema": {"type": "object"},
    ...                            "outputSchema": {"type": "object", "required": ["n"]}})
    >>> validate_structured(ToolResult.from_wire({"content": [], "structuredContent": {}}),
    ...                     tool, protocol_version="2026-07-28").errors[0].keyword
    'required'
    """
    if type(result) is not ToolResult and not isinstance(result, ToolResult):
        raise TypeError(f"result must be a ToolResult, got {type(result).__name__}")
    if type(tool) is not Tool and not isinstance(tool, Tool):
        raise TypeError(f"tool must be a Tool, got {type(tool).__name__}")
    facts = _BY_VERSION.get(protocol_version) if type(protocol_version) is str else None
    if facts is None:
        check_version(protocol_version)  # raises: not a str, or not a known revision
        raise AssertionError("unreachable")  # pragma: no cover
    has_output_schema, default_dialect, any_json = facts
    if not has_output_schema:
        return OutputValidation("skipped", skip_reason="not_in_protocol_version")
    if result.is_error:
        return OutputValidation("skipped", skip_reason="is_error")
    schema = tool.raw.get(w.OUTPUT_SCHEMA)
    if schema is None:
        return OutputValidation("skipped", skip_reason="no_output_schema")
    if type(schema) is not dict and not isinstance(schema, dict):
        raise Error(
            "protocol",
            "invalid_tool",
            f"$.outputSchema must be an object, got {json_type_name(schema)}",
            path=(w.OUTPUT_SCHEMA,),
            details={"expected": "an object", "got": json_type_name(schema)},
        )
    declared = schema.get(_SCHEMA_KEY, default_dialect)
    dialect = _DIALECT_BY_URI.get(declared) if type(declared) is str else None
    if dialect is None:
        dialect = _dialect(schema, protocol_version, w.OUTPUT_SCHEMA)  # raises
    if not result.has_structured:
        missing = OutputIssue(
            (),
            "structuredContent is missing, but the tool declares an outputSchema",
            "structuredContent",
            kind="protocol",
        )
        return OutputValidation("invalid", (missing,), dialect)

    instance = result.structured
    # The common case, inline (`compiled`'s first level, then the engine): a plainly valid
    # value needs nothing else built. Anything else goes through `_verdict`, which maps
    # engine failures.
    hit = FRONT.peek(id(schema), None)
    if hit is not None and hit[0] is schema and hit[1] == dialect and hit[4] == len(schema):
        fast = hit[3]
    else:  # a cache miss: compile (or find by content) now, then the same fast check
        entry = compiled(schema, dialect, w.OUTPUT_SCHEMA)
        fast = None if entry.loops else entry.validator
    if fast is not None and (any_json or type(instance) is dict):
        try:
            if fast.is_valid(instance):
                return _VALID[dialect]
        except BaseException as exc:
            if not isinstance(exc, Exception) and not is_panic(exc):
                raise
    issues: list[OutputIssue] = []
    if not any_json and not isinstance(instance, dict):
        issues.append(
            OutputIssue(
                (),
                "structuredContent must be an object before protocol "
                f"{SINCE['structured_content_any_json']}, "
                f"got {json_type_name(instance)}",
                "type",
                kind="protocol",
            )
        )
    return _verdict(schema, dialect, w.OUTPUT_SCHEMA, instance, w.STRUCTURED_CONTENT, issues)


def validate_arguments(tool: Tool, arguments: Any, *, protocol_version: str) -> OutputValidation:
    """Validate a `tools/call` request's `arguments` against `tool`'s `inputSchema`.

    For a client's call gate: check what a model (or a caller) wants to send before it goes out.
    `arguments` `None` (the member absent) is validated as `{}`; any other non-object is
    `invalid` with a `protocol` issue at the root (the schema is not applied). Otherwise the
    schema's verdict, with the same dialect rules, engine, cache, limits and messages as
    `validate_structured`; an `inputSchema` that is not a valid schema, or a `$ref` outside it,
    is `invalid` with a `schema` issue. Never `skipped`: every tool has an `inputSchema`.

    Args:
        tool: the tool to be called.
        arguments: the `arguments` object of the `tools/call` request (not mutated).
        protocol_version: the negotiated protocol revision (e.g. `"2026-07-28"`).

    Returns:
        The `OutputValidation` (outcome `valid` or `invalid`); issue paths are into
        `arguments`.

    Raises:
        TypeError: `tool` is not a `Tool`, `protocol_version` is not a `str`, or the inputSchema
            holds a value JSON cannot represent (caller bugs).
        Error: kind `"protocol"`, reason `"unsupported_schema_dialect"`, path
            `("inputSchema", "$schema")`. Kind `"policy"`: reason `"unknown_protocol_version"`;
            reason `"limit_exceeded"`: path `("inputSchema",)` (schema too large or too deep)
            or `("arguments",)` (value too deep), as for `validate_structured`. Kind
            `"protocol"`, reason `"invalid_json"`, path `("inputSchema",)`: the schema contains
            itself (the one treatment of cycles).

    Total: as `validate_structured`.

    Spec: 2026-07-28 server/tools "Tool" (`inputSchema`: "A JSON Schema object defining the
    expected parameters for the tool"); schema `CallToolRequestParams` (`arguments`: an object,
    optional); basic "JSON Schema Usage" (dialects, no network `$ref`s). The spec puts no MUST
    on the client here: checking before the call is this library's policy.

    >>> tool = Tool.from_wire("s", {"name": "t", "inputSchema": {
    ...     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}})
    >>> validate_arguments(tool, {"city": 3}, protocol_version="2026-07-28").errors[0].json_path
    '$.city'
    """
    if not isinstance(tool, Tool):
        raise TypeError(f"tool must be a Tool, got {type(tool).__name__}")
    check_version(protocol_version)
    schema = tool.input_schema
    dialect = _dialect(schema, protocol_version, w.INPUT_SCHEMA)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        issue = OutputIssue(
            (),
            f"arguments must be an object, got {json_type_name(arguments)}",
            "type",
            kind="protocol",
        )
        return OutputValidation("invalid", (issue,), dialect)
    return _verdict(schema, dialect, w.INPUT_SCHEMA, arguments, "arguments", [])


def arguments_validator(tool: Tool, *, protocol_version: str) -> Any:
    """The compiled validator whose `is_valid(arguments)` is `validate_arguments`' whole
    answer for an object of `arguments` that it finds valid, or `None` when no such shortcut
    exists (the schema names an unsupported dialect, cannot be compiled, or loops through
    `$ref`s so values are depth-checked first).

    For a caller that checks many calls of one tool: when `is_valid` says `True`,
    `validate_arguments(tool, arguments, ...)` is `valid` (same dialect, same compiled schema,
    no depth limit to apply); when it says `False` or raises, the caller asks
    `validate_arguments` for the issues.

    Args:
        tool: the tool to be called.
        protocol_version: a known protocol revision.

    Returns:
        A jsonschema-rs validator, or `None`.

    Raises:
        TypeError: as `validate_arguments` for a caller bug.
        Error: kind `"policy"`, reason `"unknown_protocol_version"`: as `validate_arguments`.

    Spec: as `validate_arguments` (2026-07-28 server/tools "Tool", `inputSchema`).
    """
    check_version(protocol_version)
    schema = tool.input_schema
    try:
        entry = compiled(schema, _dialect(schema, protocol_version, w.INPUT_SCHEMA), w.INPUT_SCHEMA)
    except Error:
        return None
    if entry.schema_issue is not None or entry.loops:
        return None
    return entry.validator


def _verdict(
    schema: dict[str, Any],
    dialect: str,
    role: str,
    instance: Any,
    where: str,
    issues: list[OutputIssue],
) -> OutputValidation:
    entry = compiled(schema, dialect, role)
    truncated = False
    if entry.schema_issue is not None:
        issues.append(entry.schema_issue)
    else:
        check_depth(entry, instance, where)
        truncated = collect(entry, instance, where, issues)
    if not issues:
        return _VALID[dialect]
    # The engine may report one failure once per path that reaches it (`$ref` loops).
    unique = sorted(set(issues), key=issue_key)
    return OutputValidation("invalid", tuple(unique), dialect, truncated=truncated)


def _dialect(schema: dict[str, Any], protocol_version: str, role: str) -> str:
    declared = schema.get(_SCHEMA_KEY, MISSING)
    if declared is MISSING:
        return _BY_VERSION[protocol_version][1]  # a known version: checked by every caller
    dialect = _DIALECT_BY_URI.get(declared) if isinstance(declared, str) else None
    if dialect is None:
        got = json_type_name(declared)
        details: dict[str, Any] = {"got": got, "supported": list(SUPPORTED_DIALECTS)}
        if isinstance(declared, str):
            details["value"] = declared[:200]
            message = f"$.{role}.$schema names a JSON Schema dialect that is not supported"
        else:
            message = f"$.{role}.$schema must be a string, got {got}"
        raise Error(
            "protocol",
            "unsupported_schema_dialect",
            message,
            path=(role, _SCHEMA_KEY),
            details=details,
        )
    return dialect


_ROLES: Final = (w.INPUT_SCHEMA, w.OUTPUT_SCHEMA)
_SCHEMA_WARNING: Final = {
    w.INPUT_SCHEMA: "input_schema_invalid",
    w.OUTPUT_SCHEMA: "output_schema_invalid",
}


def schema_warnings(raw: dict[str, Any], protocol_version: str) -> list[IntakeWarning]:
    """Intake's meta-schema check of one shape-checked tool's `inputSchema` and `outputSchema`.

    Each schema is checked against its dialect's meta-schema (the dialect as
    `validate_arguments` / `validate_structured` resolve it); a schema with a `$ref`, or one
    deeper than 255 levels, is compiled instead (cached for them), so an unresolved `$ref` is
    found too. A schema that is not a valid schema of its dialect, names a dialect this library
    does not support, has a `$ref` that is not resolved, or is too large or too deep to compile
    gives an `input_schema_invalid` / `output_schema_invalid` warning; the tool is still
    accepted.

    Args:
        raw: one tool as sent (passed `check_tool_shape`; not mutated).
        protocol_version: the negotiated revision (it picks the default dialect).

    Returns:
        The warnings, paths relative to the tool (`("inputSchema", ...)`, the place in the
        schema); `details["meta_schema_path"]` is the failing rule's path in the meta-schema
        (a list; empty when the problem is not a meta-schema rule); empty when both schemas
        compile.

    Raises:
        Nothing for any JSON input.

    Spec: 2026-07-28 basic "JSON Schema Usage" (schemas MUST conform to their dialect; a
    client SHOULD reject an invalid schema: here a warning, so one bad schema never costs the
    whole tool, and `validate_*` then report `invalid` with a `schema` issue).
    """
    found: list[IntakeWarning] = []
    facts = _BY_VERSION.get(protocol_version)
    default_dialect = None if facts is None else facts[1]
    for role in _ROLES:
        schema = raw.get(role)
        if type(schema) is not dict and not isinstance(schema, dict):
            continue  # absent or null outputSchema; the shape check owns inputSchema's type
        # The common case, inline: a schema seen before, in any tool of any page, whose
        # verdict was "valid" (`meta_problem`'s cache, same key); anything else goes the
        # long way below.
        declared = schema.get(_SCHEMA_KEY, default_dialect)
        dialect = _DIALECT_BY_URI.get(declared) if type(declared) is str else None
        if dialect is not None:
            try:
                seen = META_VERDICTS.peek((dialect, role, orjson.dumps(schema)), MISSING)
            except TypeError:  # not plain JSON for orjson: `meta_problem` decides
                seen = MISSING
            if seen is None:
                continue
        code = _SCHEMA_WARNING[role]
        try:
            dialect = _dialect(schema, protocol_version, role)
            problem = meta_problem(schema, dialect, role)
        except Error as exc:
            found.append(IntakeWarning(code, exc.path, exc.message, {"reason": exc.reason}))
            continue
        except TypeError:
            message = f"{role} holds a value JSON cannot represent"
            found.append(IntakeWarning(code, (role,), message))
            continue
        if problem is not None:
            issue, meta_path = problem
            details = {
                "keyword": issue.keyword,
                "dialect": dialect,
                "meta_schema_path": list(meta_path),
            }
            found.append(IntakeWarning(code, (role, *issue.schema_path), issue.message, details))
    return found
