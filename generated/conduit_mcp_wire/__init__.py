"""Generated pydantic v2 models of the MCP wire format, one module per spec version.

Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).

Each module holds the models of the definitions reachable from Tool, CallToolResult in
that version's official `schema.json` (see schema/PINNED.json). Import a module directly, or
look one up by its spec version string:

>>> from conduit_mcp_wire import module_for
>>> module_for("2026-07-28").Tool.__name__
'Tool'
"""

from __future__ import annotations

import importlib
from types import MappingProxyType, ModuleType
from typing import Final

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


__all__ = ["LATEST", "MODULES", "VERSIONS", "module_for"]
