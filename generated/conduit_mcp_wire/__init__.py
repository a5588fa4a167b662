"""Generated pydantic v2 models of the MCP wire format, one module per spec version.

Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).

Each module holds the models of the definitions reachable from Tool, CallToolResult in
that version's official `schema.json` (see schema/PINNED.json). Import a module directly, or
look one up by its spec version string:

>>> from conduit_mcp_wire import module_for
>>> module_for("2026-07-28").Tool.__name__
'Tool'

`parse_result` reads the answer to a method with the right version's models:

>>> answer = parse_result("2026-07-28", "tools/call",
...                       {"content": [{"type": "text", "text": "18°C"}], "resultType": "complete"})
>>> type(answer).__name__, answer.content[0].text
('CallToolResult', '18°C')
"""

from __future__ import annotations

import functools
import importlib
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic import TypeAdapter

#: Spec version string -> module name, oldest first ("draft" last).
MODULES: Final = MappingProxyType(
    {
        "2024-11-05": "v2024_11_05",
        "2025-03-26": "v2025_03_26",
        "2025-06-18": "v2025_06_18",
        "2025-11-25": "v2025_11_25",
        "2026-07-28": "v2026_07_28",
        "draft": "draft",
    }
)

#: Every spec version with generated models: an enumerated set, not an ordered scalar.
VERSIONS: Final = tuple(MODULES)

#: The latest released spec version.
LATEST: Final = "2026-07-28"

#: Spec version -> the definitions that answer `tools/call` there (what `ToolsCallResult` holds),
#: in the schema's order: the arms of `CallToolResultResponse.result` where the schema has it
#: (2026-07-28 on), else `CallToolResult` (and `CreateTaskResult` where tasks are, 2025-11-25).
TOOLS_CALL_ARMS: Final = MappingProxyType(
    {
        "2024-11-05": ("CallToolResult",),
        "2025-03-26": ("CallToolResult",),
        "2025-06-18": ("CallToolResult",),
        "2025-11-25": ("CallToolResult", "CreateTaskResult"),
        "2026-07-28": ("InputRequiredResult", "CallToolResult"),
        "draft": ("InputRequiredResult", "CallToolResult"),
    }
)

#: Spec version -> the members its schema's `CallToolResult` requires, sorted.
CALL_TOOL_RESULT_REQUIRED: Final = MappingProxyType(
    {
        "2024-11-05": ("content",),
        "2025-03-26": ("content",),
        "2025-06-18": ("content",),
        "2025-11-25": ("content",),
        "2026-07-28": ("content", "resultType"),
        "draft": ("content", "resultType"),
    }
)


def module_for(version: str) -> ModuleType:
    """Return the generated module for a spec version string.

    Args:
        version: one of `VERSIONS`, e.g. `"2025-06-18"`.

    Returns:
        The module (imported on first use), e.g. `conduit_mcp_wire.v2025_06_18`.

    Raises:
        KeyError: `version` is not one of `VERSIONS`.
    """
    try:
        name = MODULES[version]
    except KeyError:
        known = ", ".join(VERSIONS)
        raise KeyError(f"no generated models for MCP version {version!r}; known: {known}") from None
    return importlib.import_module(f"{__name__}.{name}")


#: JSON-RPC method -> the name of the type of its result in every version module.
ANSWERS: Final = MappingProxyType(
    {
        "tools/call": "ToolsCallResult",
        "tools/list": "ListToolsResult",
    }
)


@functools.cache
def _answer_adapter(version: str, method: str) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    try:
        name = ANSWERS[method]
    except KeyError:
        known = ", ".join(ANSWERS)
        raise KeyError(f"no answer type for method {method!r}; known: {known}") from None
    return TypeAdapter(getattr(module_for(version), name))


def parse_result(version: str, method: str, raw: Any) -> Any:
    """Read the `result` of a JSON-RPC response to `method` with `version`'s models.

    Exact to that version's schema, like `model_validate` (wire names, no coercion).

    Args:
        version: one of `VERSIONS`, e.g. `"2026-07-28"`.
        method: one of `ANSWERS`: `"tools/call"` (the version's `ToolsCallResult`) or
            `"tools/list"` (`ListToolsResult`).
        raw: the `result` member as parsed JSON (a dict), or its JSON text (`str` / `bytes`).

    Returns:
        The model instance: for `tools/call` a `CallToolResult`, an `InputRequiredResult`
        (2026-07-28 on, by `resultType`) or a `CreateTaskResult` (2025-11-25); narrow it with
        `isinstance` against the version module's classes.

    Raises:
        KeyError: an unknown version or method.
        pydantic.ValidationError: `raw` is not a valid answer at that version.
    """
    adapter = _answer_adapter(version, method)
    if isinstance(raw, (str, bytes, bytearray)):
        return adapter.validate_json(raw)
    return adapter.validate_python(raw)


__all__ = [
    "ANSWERS",
    "CALL_TOOL_RESULT_REQUIRED",
    "LATEST",
    "MODULES",
    "TOOLS_CALL_ARMS",
    "VERSIONS",
    "module_for",
    "parse_result",
]
