"""The base class of every generated wire model.

Generated; do not edit. Regenerate with `make generate` (codegen/generate.py).

Attributes are PEP 8 snake_case; the wire's names are their aliases, as in `mcp_types`
(`Tool.input_schema` is `inputSchema` on the wire, `meta` is `_meta`, `schema_` is `$schema`).

- Construction by keyword takes either name: `Tool(name="a", input_schema=s)` and
  `Tool(name="a", inputSchema=s)` build the same model (nested dicts too). Unions
  (`ContentBlock`, ...) are type aliases, not models: a block read from the wire is the
  concrete model (`TextContent`, ...); read a union spelled with attribute names with
  `TypeAdapter(ContentBlock).validate_python(value, by_name=True)`.
- Everything that reads a wire object (`model_validate`, `model_validate_json`, the compiled
  `__pydantic_validator__`, a `TypeAdapter`) takes the wire names only,
  unless the caller passes `by_name=True`: a server that sends `"is_error": true` has sent an
  unknown member (kept as an extra), not `isError`.
- `model_dump(by_alias=True)` (and `model_dump_json(by_alias=True)`) writes the wire names, so a
  wire object read and dumped with `exclude_unset=True` comes back unchanged.

Exact to the schema by default: plain `model_validate` / `model_validate_json` run pydantic's strict
mode (no `"true"` or `1` read as a boolean, no number read as a string), and an optional member
the schema does not let be null (`NOT_NULL`) reads as `None` when absent but refuses a `null`.
Unknown members are kept where the schema is open (`extra="allow"`).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import CoreSchema


class _NotNull:
    """`Annotated` metadata of an optional member whose schema does not admit `null`.

    The attribute's type stays `X | None` (absent reads as the default `None`), but the
    validator is the one of `X` alone: a `null` on the wire is refused, as the schema says.
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        return schema["schema"] if schema["type"] == "nullable" else schema

    def __repr__(self) -> str:
        return "NOT_NULL"


#: Marks an optional member that may be absent but never `null` (see `_NotNull`).
NOT_NULL: Final = _NotNull()


class WireModel(BaseModel):
    """A model of one definition of an MCP schema: snake_case attributes, wire-name aliases."""

    # Validation by alias only: the strict reading of the wire. Names are accepted by __init__.
    # Strict: the schema's types, no coercion (JSON Schema has no "true" for a boolean).
    model_config = ConfigDict(validate_by_name=False, validate_by_alias=True, strict=True)

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


__all__ = ["NOT_NULL", "WireModel"]
