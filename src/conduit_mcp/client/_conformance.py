"""Strict conformance: a raw Tool or CallToolResult checked against one spec version's schema.

Lenient `from_wire` asks "can a client work with this?"; this module asks "is this exactly what
the schema of version X allows?". Both questions are useful, and neither answers the other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final, Literal

import pydantic
import pydantic_core
from conduit_mcp_wire import VERSIONS, module_for

from ._errors import Error, PathItem

ConformanceKind = Literal["tool", "result", "tools_list"]

#: Which generated model checks which kind of wire object.
DEFINITIONS: Final = {
    "tool": "Tool",
    "result": "CallToolResult",
    "tools_list": "ListToolsResult",
}

# (version, definition) -> the model's compiled validator. Looking the model up per call
# (`module_for` goes through importlib) cost as much as validating a small result.
_validators: dict[tuple[str, str], Callable[..., Any]] = {}
_validators_lock = threading.Lock()


def conformance_violations(
    raw: object, *, kind: ConformanceKind, protocol_version: str
) -> tuple[Error, ...]:
    """Check `raw` strictly against the generated model of one spec version.

    Pydantic's strict mode is used, so nothing is coerced (`"false"` is not a boolean).
    Unknown keys are allowed, as the schemas allow them.

    Args:
        raw: the wire object as parsed from JSON (never mutated).
        kind: `"tool"` (schema `Tool`), `"result"` (`CallToolResult`) or `"tools_list"`
            (`ListToolsResult`).
        protocol_version: one of `conduit_mcp_wire.VERSIONS`.

    Returns:
        The violations, each an `Error` (kind `"protocol"`, reason `"schema_violation"`,
        pydantic's message, `path` into `raw` — the union-arm names pydantic adds to its
        locations are dropped, so the path addresses the input). Empty when `raw` conforms.
        Violations are returned, not raised: a non-conforming object is an expected outcome.

    Raises:
        Error: kind `"policy"`, reason `"unknown_protocol_version"`, for a version without
            generated models.
        ValueError: `kind` is not one of the three kinds (a caller bug).

    Total: pydantic validates in Rust; nesting deeper than its recursion guard is reported as a
    violation, not raised.

    Spec: each version's `schema.json` (vendored in `schema/`, generated into
    `conduit_mcp_wire`).
    """
    definition = DEFINITIONS.get(kind)
    if definition is None:
        raise ValueError(f"kind must be one of {sorted(DEFINITIONS)}, got {kind!r}")
    if protocol_version not in VERSIONS:
        raise Error(
            "policy",
            "unknown_protocol_version",
            f"no generated models for MCP version {protocol_version!r}",
            details={"known": list(VERSIONS)},
        )
    validate = _validators.get((protocol_version, definition))
    if validate is None:
        validate = _validator(protocol_version, definition)
    try:
        validate(raw, strict=True)
    except pydantic.ValidationError as exc:
        return tuple(
            Error(
                "protocol",
                "schema_violation",
                item["msg"],
                path=_input_path(raw, item["loc"]),
                details={"type": item["type"], "definition": definition},
            )
            for item in exc.errors(include_url=False, include_input=False)
        )
    except RecursionError:  # pragma: no cover - pydantic guards recursion itself
        return (Error("protocol", "schema_violation", "input nested too deeply", path=()),)
    return ()


def is_conformant(raw: object, *, kind: ConformanceKind, protocol_version: str) -> bool:
    """Whether `conformance_violations` finds nothing (same arguments and raises)."""
    return not conformance_violations(raw, kind=kind, protocol_version=protocol_version)


def _validator(protocol_version: str, definition: str) -> Callable[..., Any]:
    """The compiled validator of one generated model, built once and cached."""
    model = getattr(module_for(protocol_version), definition)
    # Generated models with forward references are completed lazily; complete this one now
    # so its validator is the real compiled one, not pydantic's rebuild-on-use placeholder.
    model.model_rebuild()
    validator = model.__pydantic_validator__
    validate: Callable[..., Any] = (
        validator.validate_python
        if isinstance(validator, pydantic_core.SchemaValidator)
        else model.model_validate
    )
    with _validators_lock:
        _validators[(protocol_version, definition)] = validate
    return validate


def _input_path(raw: Any, loc: tuple[int | str, ...]) -> tuple[PathItem, ...]:
    """Map a pydantic location onto the input, dropping union tags and arm names.

    A discriminated union inserts the tag value (`"text"`) after the block's index; a smart
    union inserts the arm's class name. Neither is a step into the input.
    """
    path: list[PathItem] = []
    node = raw
    last = len(loc) - 1
    for i, item in enumerate(loc):
        if isinstance(node, dict):
            if i < last and isinstance(item, str) and node.get("type") == item:
                continue  # the discriminator value pydantic adds
            if item in node:
                path.append(item)
                node = node[item]
                continue
        elif isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            path.append(item)
            node = node[item]
            continue
        if i == last:
            path.append(item)  # a missing key: the place where it should be
    return tuple(path)
