"""Which tools of a page the SDK's own models would refuse (so one bad tool never sinks a page).

Not a public module. The official SDK (`mcp` 2.3.0) validates a whole `tools/list` result
against the negotiated version's wire type (`mcp_types.methods.validate_server_result`), then
parses it into `mcp_types.ListToolsResult`; one tool that fails either raises for the whole
page. Tools that pass conduit-mcp's intake can still fail there (e.g. an `inputSchema` whose
root `type` is not `"object"`, which intake only warns about), so the guard asks the same
models, page at a time, and removes the tools they point at.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import ValidationError

#: Rounds of "validate, remove the tools named" before giving up (each round removes at least
#: one tool; pydantic reports every failing tool at once, so one round is the common case).
_MAX_ROUNDS: Final = 3

try:  # the SDK is an optional dependency (the `integrations` extra)
    import mcp_types as _types
    from mcp_types import methods as _methods
except ImportError:  # pragma: no cover - the guard's wrappers import mcp anyway
    _types = None  # type: ignore[assignment]
    _methods = None  # type: ignore[assignment]


def sdk_refusals(
    page: dict[str, Any], tools: list[Any], version: str
) -> dict[int, tuple[Any, ...]]:
    """Indexes into `tools` of the tools the SDK would refuse, each with the error's path.

    Args:
        page: the `tools/list` result (its other members are kept as sent).
        tools: the tools still on the page (raw definitions).
        version: the negotiated protocol version.

    Returns:
        `{index: path_within_tool}`; empty when the SDK accepts the page, does not know the
        version, or fails for a reason no tool explains (then the SDK decides).
    """
    if _methods is None:
        return {}
    refused: dict[int, tuple[Any, ...]] = {}
    remaining = list(range(len(tools)))
    for _ in range(_MAX_ROUNDS):
        candidate = {**page, "tools": [tools[i] for i in remaining]}
        found = _failing(candidate, version)
        if not found:
            break
        for local, path in found.items():
            if local < len(remaining):
                refused.setdefault(remaining[local], path)
        keep = set(found)
        remaining = [i for n, i in enumerate(remaining) if n not in keep]
    return refused


def _failing(page: dict[str, Any], version: str) -> dict[int, tuple[Any, ...]]:
    try:
        _methods.validate_server_result("tools/list", version, page)
        _types.ListToolsResult.model_validate(page, by_name=False)
    except ValidationError as exc:
        found: dict[int, tuple[Any, ...]] = {}
        for err in exc.errors(include_url=False, include_input=False, include_context=False):
            loc = err.get("loc", ())
            if len(loc) >= 2 and loc[0] == "tools" and type(loc[1]) is int:
                found.setdefault(loc[1], tuple(loc[2:]))
        return found
    except (KeyError, ValueError):  # a version or method the SDK does not know
        return {}
    return {}
