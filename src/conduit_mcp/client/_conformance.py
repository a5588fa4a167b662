"""Strict conformance: a raw wire object checked against one spec version's official schema.

Lenient `from_wire` asks "can a client work with this?"; this module asks "is this exactly what
the schema of version X allows?". Both questions are useful, and neither answers the other.

The check is JSON Schema itself: the vendored `schema/<version>/schema.json` (the same file the
generated models come from) through the engine `validate_structured` uses (jsonschema-rs), so a
verdict here is exactly the official schema's (`1.0` is an integer; `null` is not an absent
optional member). The generated models stay what users import; they are not consulted here.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Final, Literal

from conduit_mcp_wire import TOOLS_CALL_ARMS

from ._engine import describe, is_panic
from ._errors import Error
from ._versions import KNOWN_VERSIONS

ConformanceKind = Literal["tool", "result", "tools_list", "call_result"]

#: The schema definitions each kind checks: one name, or for `call_result` the arms of the
#: `tools/call` result union of the version (`conduit_mcp_wire.TOOLS_CALL_ARMS`, which the
#: generator reads from each schema: `CallToolResultResponse.result` from 2026-07-28, where an
#: `InputRequiredResult` conforms too; `CallToolResult` plus `CreateTaskResult` at 2025-11-25,
#: server/tools "Task-Augmented Tool Calls"; `CallToolResult` before).
DEFINITIONS: Final = {
    "tool": "Tool",
    "result": "CallToolResult",
    "tools_list": "ListToolsResult",
    "call_result": "CallToolResult",
}

# The vendored schemas: packaged under conduit_mcp/_schema (wheel), or the checkout's schema/.
# (os.path, not pathlib: `import conduit_mcp.client` stays light.)
_HERE: Final = os.path.dirname(os.path.realpath(__file__))
_SCHEMA_DIRS: Final = (
    os.path.join(os.path.dirname(_HERE), "_schema"),
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(_HERE))), "schema"),
)

_validators: dict[tuple[str, str], Any] = {}
#: kind -> version -> the compiled validator's bound `is_valid`: the per-call lookup, two dict
#: reads of interned strings (no tuple key built, no attribute looked up per call).
_IS_VALID: Final[dict[str, dict[str, Any]]] = {kind: {} for kind in DEFINITIONS}
_CONFORMS: Final[tuple[Error, ...]] = ()
_validators_lock = threading.Lock()


def conformance_violations(
    raw: object, *, kind: ConformanceKind, protocol_version: str
) -> tuple[Error, ...]:
    """Check `raw` against one definition (or union) of one version's official `schema.json`.

    Exactly JSON Schema's verdict: nothing is coerced (`"false"` is not a boolean), `1.0` is an
    integer, a `null` optional member is a violation, unknown keys are allowed where the schema
    allows them.

    Args:
        raw: the wire object as parsed from JSON (never mutated).
        kind: `"tool"` (schema `Tool`), `"result"` (`CallToolResult`), `"tools_list"`
            (`ListToolsResult`) or `"call_result"` (the `tools/call` result union: see
            `DEFINITIONS`; on 2026-07-28 a valid `InputRequiredResult` conforms).
        protocol_version: a revision this library knows (`"2024-11-05"` ... `"draft"`).

    Returns:
        The violations, each an `Error` (kind `"protocol"`, reason `"schema_violation"`, a
        message worded by this library that never echoes the value, `path` into `raw`;
        `details`: `keyword`, `definition`, `schema_path` into the definition). For a union
        that no arm accepts: the violations of the closest arm (strictly fewest violations),
        `details["definition"]` naming it; the same inside for a closed union (a content block
        reports `content[0].text`, not the block); on a tie, the union's own failure
        (`details["definition"]` names the arms, `"A | B"`). Empty
        when `raw` conforms. Violations are returned, not raised: a non-conforming object is
        an expected outcome.

    Raises:
        Error: kind `"policy"`, reason `"unknown_protocol_version"`, for a version without a
            vendored schema.
        ValueError: `kind` is not one of the four kinds (a caller bug).

    Total: validation runs in Rust; a value nested deeper than the engine describes (254
    levels) gives one violation at the root; engine failures (a lone surrogate, a panic) are
    one violation at the root, never an exception.

    Spec: each version's `schema.json` (vendored in `schema/`; PINNED.json names its commit).
    """
    # A compiled validator for the pair proves both arguments good: two lookups, then Rust.
    by_version = _IS_VALID.get(kind)
    is_valid = None if by_version is None else by_version.get(protocol_version)
    if is_valid is None:
        return _violations(raw, kind, protocol_version)
    try:
        if is_valid(raw):
            return _CONFORMS
    except BaseException as exc:
        if not isinstance(exc, Exception) and not is_panic(exc):
            raise
        return _violations(raw, kind, protocol_version)  # described there
    return _violations(raw, kind, protocol_version, known_invalid=True)


def _violations(
    raw: object, kind: str, protocol_version: str, *, known_invalid: bool = False
) -> tuple[Error, ...]:
    """`conformance_violations` past its fast path: checks the arguments, then describes."""
    validator = _validators.get((protocol_version, kind))
    if validator is None:
        if kind not in DEFINITIONS:
            raise ValueError(f"kind must be one of {sorted(DEFINITIONS)}, got {kind!r}")
        if protocol_version not in KNOWN_VERSIONS:
            raise Error(
                "policy",
                "unknown_protocol_version",
                f"no schema for MCP version {protocol_version!r}",
                details={"known": list(KNOWN_VERSIONS)},
            )
        validator = _validator(protocol_version, kind)
    try:
        if not known_invalid and validator.is_valid(raw):
            return _CONFORMS
        errors = list(validator.iter_errors(raw))
    except BaseException as exc:
        if not isinstance(exc, Exception) and not is_panic(exc):
            raise
        text = "value could not be checked: nested too deeply or not JSON"
        details = {"keyword": "type", "definition": _arms(protocol_version, kind)[0]}
        return (Error("protocol", "schema_violation", text, details=details),)
    arms = _arms(protocol_version, kind)
    definition = " | ".join(arms)
    if len(arms) > 1 and len(errors) == 1 and errors[0].kind.context:
        # The union's anyOf failed: report the closest arm's own violations.
        best = _closest(errors[0].kind.context)
        if best is not None:
            definition = arms[best]
            errors = list(errors[0].kind.context[best])
    return tuple(_violation(e, definition) for e in _expand(errors))


def _closest(context: Any) -> int | None:
    # The arm with strictly the fewest errors, or None on a tie (e.g. an unknown block type
    # fails every arm's discriminator alike: then the union's own failure is reported).
    sizes = sorted((len(arm), i) for i, arm in enumerate(context))
    if len(sizes) > 1 and sizes[0][0] == sizes[1][0]:
        return None
    return sizes[0][1]


def _expand(errors: list[Any]) -> list[Any]:
    """Replace each failed anyOf/oneOf (none matched) by its closest arm's errors, iteratively.

    A closed union (a content block) then reports `content[0].text` rather than "matches none
    of the anyOf subschemas" at the block.
    """
    out: list[Any] = []
    work = list(reversed(errors))
    while work:
        err = work.pop()
        kind = err.kind
        if type(kind).__name__ in ("AnyOf", "OneOfNotValid") and kind.context:
            best = _closest(kind.context)
            if best is not None and kind.context[best]:
                work.extend(reversed(list(kind.context[best])))
                continue
        out.append(err)
    return out


def is_conformant(raw: object, *, kind: ConformanceKind, protocol_version: str) -> bool:
    """Whether `conformance_violations` finds nothing (same arguments and raises)."""
    return not conformance_violations(raw, kind=kind, protocol_version=protocol_version)


def _arms(version: str, kind: str) -> tuple[str, ...]:
    if kind == "call_result":
        return TOOLS_CALL_ARMS[version]
    return (DEFINITIONS[kind],)


def _violation(err: Any, definition: str) -> Error:
    issue = describe(err)
    path = issue.path
    if type(err.kind).__name__ == "Required":
        path = (*path, err.kind.property)  # the place where the member should be
    # Paths into the definition: drop the wrapper's allOf|anyOf/<i>/$ref steps.
    schema_path = issue.schema_path
    if len(schema_path) >= 3 and schema_path[0] in ("allOf", "anyOf") and schema_path[2] == "$ref":
        schema_path = schema_path[3:]
    return Error(
        "protocol",
        "schema_violation",
        issue.message,
        path=path,
        details={
            "keyword": issue.keyword,
            "definition": definition,
            "schema_path": list(schema_path),
        },
    )


def _load(version: str) -> dict[str, Any]:
    for folder in _SCHEMA_DIRS:
        path = os.path.join(folder, version, "schema.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as file:
                loaded: dict[str, Any] = json.load(file)
            return loaded
    raise FileNotFoundError(f"schema.json for {version} is not installed")  # a packaging bug


def _validator(version: str, kind: str) -> Any:
    """The compiled validator of one definition or union, built once and cached."""
    import jsonschema_rs

    doc = _load(version)
    defs = "$defs" if "$defs" in doc else "definitions"
    refs = [{"$ref": f"#/{defs}/{name}"} for name in _arms(version, kind)]
    # allOf/anyOf around the $ref: in draft-07 a $ref beside other keywords hides them.
    root = {"$schema": doc["$schema"], defs: doc[defs]}
    root["anyOf" if len(refs) > 1 else "allOf"] = refs
    cls = jsonschema_rs.validator_cls_for(root)

    def refuse(uri: str) -> Any:
        raise LookupError("retrieval is disabled")

    validator = cls(root, validate_formats=False, retriever=refuse)
    with _validators_lock:
        _validators[(version, kind)] = validator
        _IS_VALID[kind][version] = validator.is_valid
    return validator
