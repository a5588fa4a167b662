"""The base class of every generated wire model.

Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).

Attributes are PEP 8 snake_case; the wire's names are their aliases, as in `mcp_types`
(`Tool.input_schema` is `inputSchema` on the wire, `meta` is `_meta`, `schema_` is `$schema`).

- Construction by keyword takes either name: `Tool(name="a", input_schema=s)` and
  `Tool(name="a", inputSchema=s)` build the same model (nested dicts too). The union root
  models (`ContentBlock`, ...) are not `WireModel`s and take one value: read a value spelled
  with attribute names with `model_validate(value, by_name=True)`.
- Everything that reads a wire object (`model_validate`, `model_validate_json`, the compiled
  `__pydantic_validator__`, a `TypeAdapter`, the union root models) takes the wire names only,
  unless the caller passes `by_name=True`: a server that sends `"is_error": true` has sent an
  unknown member (kept as an extra), not `isError`.
- `model_dump(by_alias=True)` (and `model_dump_json(by_alias=True)`) writes the wire names, so a
  wire object read and dumped with `exclude_unset=True` comes back unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A model of one definition of an MCP schema: snake_case attributes, wire-name aliases."""

    # Validation by alias only: the strict reading of the wire. Names are accepted by __init__.
    model_config = ConfigDict(validate_by_name=False, validate_by_alias=True)

    def __init__(self, /, **data: Any) -> None:
        """Build from keywords, by attribute name or wire name (pydantic's `BaseModel.__init__`,
        validating with `by_name=True`).

        Raises:
            pydantic.ValidationError: the data does not fit the model.
        """
        __tracebackhide__ = True
        self.__pydantic_validator__.validate_python(data, self_instance=self, by_name=True)

    # pydantic's own mark (RootModel.__init__ carries it too): this __init__ only validates, so
    # model_validate must not route wire input through it (which would accept names there too).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


__all__ = ["WireModel"]
