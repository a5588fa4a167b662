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

import types
import typing
from collections import OrderedDict
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from ..client import Tool
from ._sdkfast import surely_accepted

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


_result_adapter: Any = None


def sdk_result_refusal(result: Any, version: str) -> tuple[Any, ...] | None:
    """Where the SDK's own models refuse a `tools/call` result, or `None` when they accept it.

    mcp 2.3.0 `ClientSession.send_request` validates the result against the negotiated
    version's wire type (`mcp_types.methods.validate_server_result`), drops a later
    revision's fields, then parses it with `CallToolResult | InputRequiredResult`; a refusal
    there raises pydantic's `ValidationError` out of `call_tool`. conduit-mcp's
    `parse_call_result` is more liberal (a missing `content` reads as `[]`), so a result it
    accepts can still sink the SDK's call. This asks the same models the same way.

    Args:
        result: the response's `result` (a JSON object as parsed; not mutated).
        version: the negotiated protocol version.

    Returns:
        The error's location within `result` (keys and indexes), `()` when pydantic gives
        none; `None` when the SDK accepts the result or does not know the version (then the
        SDK decides).
    """
    global _result_adapter
    if _methods is None or not isinstance(result, dict):
        return None
    if ("tools/call", version) not in _methods.SERVER_RESULTS:
        return None  # a version the SDK's table lacks: the SDK decides
    if surely_accepted(result, version):  # a plain result: no model needs asking
        return None
    try:
        _methods.validate_server_result("tools/call", version, result)
    except ValidationError as exc:
        return _location(exc)
    except Exception:  # e.g. its JSON dump fails: the SDK would raise the same
        return ()
    if _result_adapter is None:
        from pydantic import TypeAdapter

        _result_adapter = TypeAdapter(_types.CallToolResult | _types.InputRequiredResult)
    foreign = _later_fields(version)
    raw = {k: v for k, v in result.items() if k not in foreign} if foreign else result
    try:
        _result_adapter.validate_python(raw, by_name=False)
    except ValidationError as exc:
        return _location(exc)
    return None


_later: dict[str, frozenset[str]] = {}


def _later_fields(version: str) -> frozenset[str]:
    """The later-revision fields the SDK drops from a tools/call result at `version`: the
    top-level wire keys a newer revision's result type declares that this one's does not
    (what mcp 2.3.0 `ClientSession` drops before parsing, worked out here from the public
    `mcp_types.methods.SERVER_RESULTS` table and `mcp_types.version.KNOWN_PROTOCOL_VERSIONS`,
    so no private SDK name is used). Empty at the newest revision or an unknown one."""
    hit = _later.get(version)
    if hit is not None:
        return hit
    fields: frozenset[str] = frozenset()
    try:
        from mcp_types.version import KNOWN_PROTOCOL_VERSIONS as known
    except ImportError:  # pragma: no cover - without the SDK the SDK decides nothing
        return fields
    table = _methods.SERVER_RESULTS if _methods is not None else {}
    current = table.get(("tools/call", version))
    if current is not None and version in known:
        newer = known[known.index(version) + 1 :]
        later: set[str] = set()
        for revision in newer:
            row = table.get(("tools/call", revision))
            if row is not None:
                later |= _wire_fields(row)
        fields = frozenset(later - _wire_fields(current))
    _later[version] = fields
    return fields


def _wire_fields(target: Any) -> set[str]:
    """Top-level wire keys a result type declares (each member's, for a union)."""
    members = typing.get_args(target) if isinstance(target, types.UnionType) else (target,)
    keys: set[str] = set()
    for model in members:
        if isinstance(model, type) and issubclass(model, BaseModel):
            keys.update(field.alias or name for name, field in model.model_fields.items())
    return keys


def _location(exc: ValidationError) -> tuple[Any, ...]:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    return tuple(errors[0].get("loc", ())) if errors else ()
