"""Which tools of a page the SDK's own models would refuse (so one bad tool never sinks a page).

Not a public module. The official SDK (`mcp` 2.3.0, `ClientSession.send_request`) validates a
whole `tools/list` result against the negotiated version's wire type
(`mcp_types.methods.SERVER_RESULTS[("tools/list", version)]`), then parses it into the
version-free `mcp_types.ListToolsResult`; one tool that fails either raises for the whole
page. Tools that pass conduit-mcp's intake can still fail there (e.g. an `inputSchema` whose
root `type` is not `"object"`, which intake only warns about), so the guard asks the same two
models, tool by tool, and removes the tools they refuse. Under mcp 1.x (no `mcp_types`) the
models asked are mcp 1.x's own (`_sdkcheck1`).

Verdicts are cached by (version, tool fingerprint): a server lists the same tools again and
again, and an unchanged definition gets the same verdict. (The fingerprint is of the canonical
JSON, where `1` and `1.0` are one number; a strict model may tell them apart. The cost of that
corner is a page the SDK refuses as a whole, never a tool let through unchecked by intake.)
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import TYPE_CHECKING, Any, Final

from ..client import Tool
from ..client._cache import MISSING, BoundedCache
from . import _sdkcheck1
from ._sdkfast import surely_accepted

if TYPE_CHECKING:  # pydantic is imported with the SDK's models, on the first check (`_sdk`)
    from pydantic import BaseModel, ValidationError

_CACHE_SIZE: Final = 8192
#: (version, fingerprint) -> the refusal's path or `None`; hits are read lock-free (`peek`).
_cache: BoundedCache[tuple[str, str], tuple[Any, ...] | None] = BoundedCache(_CACHE_SIZE)


@functools.cache
def _sdk() -> tuple[Any, Any]:
    """`(mcp_types, mcp_types.methods)`, or `(None, None)` without them (mcp 1.x or no SDK).

    Imported on the first check that needs the SDK's models, not with the guard (nor is
    pydantic, which the checks import where they use it): importing `mcp_types` costs ~0.3 s
    of CPU (its models for every revision), which a proxy's start paid before it relayed its
    first byte (row P3) although `initialize` needs no model. The verdicts are the same; only
    their first one pays the import. (The import lock makes two threads' first calls import
    it once.)
    """
    try:  # the SDK is an optional dependency (the `mcp` extra)
        import mcp_types
        from mcp_types import methods
    except ImportError:  # pragma: no cover - the guard's wrappers import mcp anyway
        return None, None
    return mcp_types, methods


def _tool_models(version: str) -> tuple[type[BaseModel], ...] | None:
    """The per-tool models the SDK applies at `version` (surface's `Tool`, then monolith's)."""
    _types, _methods = _sdk()
    if _methods is None:
        return _sdkcheck1.tool_models()  # mcp 1.x's, when that is the SDK installed
    from pydantic import BaseModel

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
        verdict = _cache.peek(key) if tool.fingerprint else MISSING
        if verdict is MISSING:
            verdict = _check(tool.raw, models)
            if tool.fingerprint:
                _cache.put(key, verdict)
        if verdict is not None:
            refused[index] = verdict
    return refused


def _check(raw: dict[str, Any], models: tuple[type[BaseModel], ...]) -> tuple[Any, ...] | None:
    from pydantic import ValidationError

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
    if not isinstance(result, dict):
        return None
    if surely_accepted(result, version):  # a plain result: no model needs asking (nor import)
        return None
    _types, _methods = _sdk()
    if _methods is None:  # mcp 1.x's model, when that is the SDK installed
        return _sdkcheck1.result_refusal(result)
    if ("tools/call", version) not in _methods.SERVER_RESULTS:
        return None  # a version the SDK's table lacks: the SDK decides
    from pydantic import ValidationError

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


def _later_fields(version: str) -> frozenset[str]:
    """The later-revision fields the SDK drops from a tools/call result at `version`.

    mcp 2.1.0 and later, before validating a result, drop the top-level keys that only a
    revision newer than the negotiated one declares (e.g. 2026-07-28 `ttlMs` on a 2025-11-25
    session); mcp 2.0.x validates the result as it is. The keys come from the SDK's public
    tables (`mcp_types.methods.SERVER_RESULTS`, `mcp_types.version.KNOWN_PROTOCOL_VERSIONS`),
    computed as the SDK computes them.

    Args:
        version: the negotiated protocol version.

    Returns:
        The wire keys to drop; empty for the newest known revision, an unknown version, or an
        SDK that drops none.
    """
    if _sdk()[1] is None or not _sdk_drops_later_fields():
        return frozenset()
    return _later_revision_keys("tools/call", version)


@functools.cache
def _sdk_drops_later_fields() -> bool:
    """Whether the installed mcp (2.1.0 or later) drops later-revision fields (read once, on
    first use: `importlib.metadata` scans the installed distributions)."""
    from importlib import metadata

    try:
        release = metadata.version("mcp")
    except metadata.PackageNotFoundError:  # pragma: no cover - mcp_types without mcp
        return False
    parts = re.match(r"(\d+)\.(\d+)", release)
    return parts is None or (int(parts[1]), int(parts[2])) >= (2, 1)


@functools.cache
def _later_revision_keys(method: str, version: str) -> frozenset[str]:
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    _methods = _sdk()[1]
    current = _methods.SERVER_RESULTS.get((method, version))
    if current is None or version not in KNOWN_PROTOCOL_VERSIONS:
        return frozenset()
    later: set[str] = set()
    for revision in KNOWN_PROTOCOL_VERSIONS[KNOWN_PROTOCOL_VERSIONS.index(version) + 1 :]:
        row = _methods.SERVER_RESULTS.get((method, revision))
        if row is not None:
            later |= _wire_keys(row)
    return frozenset(later) - _wire_keys(current)


def _wire_keys(target: Any) -> frozenset[str]:
    """Top-level wire keys a result model declares (its members', for a union)."""
    from pydantic import BaseModel

    members = typing.get_args(target) if isinstance(target, types.UnionType) else (target,)
    keys: set[str] = set()
    for model in members:
        if isinstance(model, type) and issubclass(model, BaseModel):
            keys.update(field.alias or name for name, field in model.model_fields.items())
    return frozenset(keys)


def _location(exc: ValidationError) -> tuple[Any, ...]:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    return tuple(errors[0].get("loc", ())) if errors else ()
