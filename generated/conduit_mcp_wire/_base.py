"""The base class of every generated wire model.

Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).

Attributes are PEP 8 snake_case; the wire's names are their aliases, as in `mcp_types`
(`Tool.input_schema` is `inputSchema` on the wire, `meta` is `_meta`, `schema_` is `$schema`).

- Construction by keyword takes either name: `Tool(name="a", input_schema=s)` and
  `Tool(name="a", inputSchema=s)` build the same model.
- Reading a wire object (`model_validate`, `model_validate_json`, `model_validate_strings`) takes
  the wire names only, unless the caller passes `by_name=True`: a server that sends
  `"is_error": true` has sent an unknown member (kept as an extra), not `isError`.
- `model_dump(by_alias=True)` (and `model_dump_json(by_alias=True)`) writes the wire names, so a
  wire object read and dumped with `exclude_unset=True` comes back unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from typing_extensions import Self


class WireModel(BaseModel):
    """A model of one definition of an MCP schema: snake_case attributes, wire-name aliases."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate a wire object (wire names only unless `by_name=True`); see pydantic."""
        kwargs.setdefault("by_name", False)
        return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Validate wire JSON text (wire names only unless `by_name=True`); see pydantic."""
        kwargs.setdefault("by_name", False)
        return super().model_validate_json(json_data, **kwargs)

    @classmethod
    def model_validate_strings(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate string data (wire names only unless `by_name=True`); see pydantic."""
        kwargs.setdefault("by_name", False)
        return super().model_validate_strings(obj, **kwargs)


__all__ = ["WireModel"]
