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

from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


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


class _IntegralFloat:
    """`Annotated` metadata of `int`: also take a float with no fraction (`1.0`) as that int.

    JSON Schema's `integer` is any number with a zero fractional part, so `1.0` is one; pydantic's
    strict `int` refuses it. Everything else stays strict (no `"1"`, no `true`, no `1.5`).
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_before_validator_function(_integral_to_int, handler(source))

    def __repr__(self) -> str:
        return "IntegralFloat"


def _integral_to_int(value: Any) -> Any:
    if type(value) is float and value.is_integer():
        return int(value)
    return value


#: JSON Schema's `integer`: an `int`, or a float with no fraction read as that int.
JSONInteger = Annotated[int, _IntegralFloat()]


def result_type_tag(value: Any) -> str:
    """The tag `ToolsCallResult` reads a `tools/call` answer by (basic "Result types").

    Args:
        value: the answer: a dict off the wire, or a model (a value being re-validated).

    Returns:
        `"complete"` or `"input_required"` when `resultType` (`result_type` on a model) says so,
        `"other"` for any other value or none (the answer is then read as whichever arm it fits).
    """
    if isinstance(value, dict):
        kind = value.get("resultType")
    else:
        kind = getattr(value, "result_type", None)
    return kind if kind in ("complete", "input_required") else "other"


class AsDict:
    """`Annotated` metadata of a JSON-object member a user fills by hand (`inputSchema`,
    `outputSchema`, a result's `_meta`): typed `dict[str, Any]`, checked as `model`.

    The value is validated against the members `model` (a generated `WireModel` of that JSON
    object) declares, by their wire names, with the model's strictness and unknown members kept
    where the model is open, and it is kept as the plain dict the wire sent (wire names as keys;
    pydantic's typed-dict validator, so no model instance is built).

    Args:
        model: the generated model of the JSON object, e.g. `InputSchema`.

    Raises:
        TypeError: at class creation, when `model`'s schema is not a plain model (a generator
            change this marker does not know).
    """

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema: Any = handler.resolve_ref_schema(handler.generate_schema(self.model))
        fields_schema = schema.get("schema", {})
        if schema.get("type") != "model" or fields_schema.get("type") != "model-fields":
            raise TypeError(f"AsDict({self.model.__name__}): not a plain model schema")
        config = schema.get("config", {})
        fields: dict[str, core_schema.TypedDictField] = {}
        for name, field in fields_schema["fields"].items():
            inner, required = field["schema"], True
            if inner["type"] == "default":  # optional: absent stays absent, no default written
                inner, required = inner["schema"], False
            key = field.get("validation_alias", name)
            if not isinstance(key, str):
                raise TypeError(f"AsDict({self.model.__name__}): alias of {name} is not a name")
            fields[key] = core_schema.typed_dict_field(inner, required=required)
        return core_schema.typed_dict_schema(
            fields,
            extra_behavior=config.get("extra_fields_behavior", "ignore"),
            extras_schema=fields_schema.get("extras_schema"),
            strict=config.get("strict", False),
            ref=f"AsDict:{schema.get('ref', self.model.__qualname__)}",
        )

    def __repr__(self) -> str:
        return f"AsDict({self.model.__name__})"


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


__all__ = ["NOT_NULL", "AsDict", "JSONInteger", "WireModel", "result_type_tag"]
