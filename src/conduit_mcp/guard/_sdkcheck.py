"""Which tools of a page the SDK's own models would refuse (so one bad tool never sinks a page).

Not a public module. The official SDK (`mcp` 2.3.0, `ClientSession.send_request`) validates a
whole `tools/list` result against the negotiated version's wire type
(`mcp_types.methods.SERVER_RESULTS[("tools/list", version)]`), then parses it into the
version-free `mcp_types.ListToolsResult`; one tool that fails either raises for the whole
page. Tools that pass conduit-mcp's intake can still fail there (e.g. an `inputSchema` whose
root `type` is not `"object"`, which intake only warns about), so the guard asks the same two
models, tool by tool, and removes the tools they refuse.

Verdicts are cached by (version, tool fingerprint): a server lists the same tools again and
again, and an unchanged definition gets the same verdict. (The fingerprint is of the canonical
JSON, where `1` and `1.0` are one number; a strict model may tell them apart. The cost of that
corner is a page the SDK refuses as a whole, never a tool let through unchecked by intake.)
"""

from __future__ import annotations

import typing
from collections import OrderedDict
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from ..client import Tool

_CACHE_SIZE: Final = 8192
_cache: OrderedDict[tuple[str, str], tuple[Any, ...] | None] = OrderedDict()
_MISSING: Any = object()

try:  # the SDK is an optional dependency (the `integrations` extra)
    import mcp_types as _types
    from mcp_types import methods as _methods
except ImportError:  # pragma: no cover - the guard's wrappers import mcp anyway
    _types = None  # type: ignore[assignment]
    _methods = None  # type: ignore[assignment]


def _tool_models(version: str) -> tuple[type[BaseModel], ...] | None:
    """The per-tool models the SDK applies at `version` (surface's `Tool`, then monolith's)."""
    if _methods is None:
        return None
    surface = _methods.SERVER_RESULTS.get(("tools/list", version))
    if not (isinstance(surface, type) and issubclass(surface, BaseModel)):
        return None
    field = surface.model_fields.get("tools")
    args = typing.get_args(field.annotation) if field is not None else ()
    if len(args) != 1 or not (isinstance(args[0], type) and issubclass(args[0], BaseModel)):
        return None
    return (args[0], _types.Tool)


def sdk_refusals(tools: list[Tool], version: str) -> dict[int, tuple[Any, ...]]:
    """Indexes into `tools` of the tools the SDK would refuse, each with the error's path.

    Args:
        tools: accepted `Tool`s (fingerprinted by intake), in page order.
        version: the negotiated protocol version.

    Returns:
        `{index: path_within_the_tool}`; empty when the SDK accepts every tool or does not know
        the version (then the SDK decides).
    """
    models = _tool_models(version)
    if models is None:
        return {}
    refused: dict[int, tuple[Any, ...]] = {}
    for index, tool in enumerate(tools):
        key = (version, tool.fingerprint or "")
        verdict = _cache.get(key, _MISSING) if tool.fingerprint else _MISSING
        if verdict is _MISSING:
            verdict = _check(tool.raw, models)
            if tool.fingerprint:
                _cache[key] = verdict
                if len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        if verdict is not None:
            refused[index] = verdict
    return refused


def _check(raw: dict[str, Any], models: tuple[type[BaseModel], ...]) -> tuple[Any, ...] | None:
    for model in models:
        try:
            model.model_validate(raw, by_name=False)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            return tuple(errors[0].get("loc", ())) if errors else ()
    return None
