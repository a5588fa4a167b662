"""What mcp 1.x's own models would refuse: a listed tool, a `tools/call` result.

Not a public module: `_sdkcheck` asks it when the installed SDK is mcp 1.x (no `mcp_types`).
mcp 1.x (read against 1.24.0 and 1.30.0) validates a response in `BaseSession.send_request`
with `result_type.model_validate(result)`: `ListToolsResult` for `tools/list` (one tool its
`Tool` refuses raises for the whole page) and `CallToolResult` for `tools/call` (a result it
refuses raises pydantic's `ValidationError` out of `call_tool`). Its models are the same at
every protocol version it speaks. `mcp.types` is imported on first use only, so the engine
still loads without the SDK.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic comes with the SDK's models, on the first check
    from pydantic import BaseModel


@functools.cache
def _types() -> Any:
    """mcp 1.x's `mcp.types` module, or `None` (no mcp, or not 1.x).

    Asked on the first check, not at import: `importlib.metadata` (which scans the installed
    distributions) and `RootModel` cost a proxy's start CPU its first byte does not need."""
    from importlib import metadata

    from pydantic import RootModel

    try:
        if not metadata.version("mcp").startswith("1."):
            return None
        types = importlib.import_module("mcp.types")
    except (metadata.PackageNotFoundError, ImportError):
        return None
    message = getattr(types, "JSONRPCMessage", None)
    if not (isinstance(message, type) and issubclass(message, RootModel)):
        return None
    return types


def tool_models() -> tuple[type[BaseModel], ...] | None:
    """The per-tool model mcp 1.x applies to a `tools/list` page (`mcp.types.Tool`), or `None`
    when mcp 1.x is not installed (then nothing is asked)."""
    types = _types()
    return None if types is None else (types.Tool,)


def result_refusal(result: dict[str, Any]) -> tuple[Any, ...] | None:
    """Where mcp 1.x's `CallToolResult` refuses a `tools/call` result.

    Args:
        result: the response's `result` object (not mutated).

    Returns:
        The error's location within `result` (`()` when pydantic names none); `None` when the
        model accepts it or mcp 1.x is not installed.
    """
    types = _types()
    if types is None:
        return None
    from pydantic import ValidationError

    try:
        types.CallToolResult.model_validate(result, by_name=False)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        return tuple(errors[0].get("loc", ())) if errors else ()
    except Exception:  # e.g. a value pydantic cannot read: the SDK would raise the same
        return ()
    return None
