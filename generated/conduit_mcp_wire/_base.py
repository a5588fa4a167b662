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

from collections.abc import Callable
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import CoreSchema, SchemaValidator, core_schema


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


#: A member absent from a JSON object (`dict.get`'s default in the fast checks and tags).
_ABSENT: Final = object()


class MemberTag:
    """The callable `Discriminator` of a union whose arms a member's value tells apart.

    The member's value (a string on the wire) names the tag of the arms that admit it; a value
    no arm admits, a missing member with no arm for it, or anything that is not a dict (a model
    being re-validated) gives `"other"`: the union's arm of that name holds every arm, read as
    the schema's `anyOf` would. The generator derives `tags` from the schema's `const` / `enum`
    members and checks them (codegen/tagged_unions.py).

    Args:
        member: the wire name of the member, e.g. `"type"`.
        tags: the member's value -> the tag of the arm (or arms) admitting it.
        absent: the tag when the member is missing (the arm where it is optional), or None.
    """

    def __init__(self, member: str, tags: dict[str, str], absent: str | None = None) -> None:
        self.member = member
        self.tags = tags
        self.absent = absent
        self.__name__ = f"the value of {member!r}"  # pydantic names the discriminator in errors

    def __call__(self, value: Any) -> str:
        if value.__class__ is not dict:
            return "other"
        found = value.get(self.member, _ABSENT)
        if found is _ABSENT:
            return self.absent or "other"
        return self.tags.get(found, "other") if found.__class__ is str else "other"

    def __repr__(self) -> str:
        return f"MemberTag({self.member!r}, {self.tags!r}, absent={self.absent!r})"


class PresentTag:
    """The callable `Discriminator` of a union of open objects told apart by a required string
    member each (a resource's `text` or `blob`): the first member present as a string names the
    arm; otherwise (or for a model being re-validated) `"other"`, the arm holding every arm.

    The generator checks that the arms differ only in these members (codegen/tagged_unions.py),
    so the arm named is one that accepts the value whenever any arm does.

    Args:
        members: the members, in the order they are tried; each is also the tag of its arm.
    """

    def __init__(self, *members: str) -> None:
        self.members = members
        self.__name__ = f"which of {', '.join(map(repr, members))} is a string"  # for errors

    def __call__(self, value: Any) -> str:
        if value.__class__ is dict:
            for member in self.members:
                if value.get(member).__class__ is str:
                    return member
        return "other"

    def __repr__(self) -> str:
        return f"PresentTag{self.members!r}"


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


#: Core-schema keys a fast check may ignore: they change neither what is accepted nor the value.
_IGNORABLE_KEYS: Final = frozenset({"type", "metadata", "ref", "serialization", "strict"})

_Check = Callable[[Any], bool]


def _accept_any(value: Any) -> bool:
    return True


def _fast_check(schema: Any) -> _Check | None:
    """A Python predicate that is true only for values the strict core `schema` accepts unchanged.

    Covers the shapes of the hand-filled JSON objects (`str`, `bool`, string literals, `any`,
    lists, string-keyed dicts, `nullable`); anything else (constraints, references, functions)
    gives None: no fast check, the exact validator always runs. A value the predicate refuses is
    not necessarily invalid: it goes to the exact validator, which decides and explains.
    """
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    known = {
        "any": (),
        "str": (),
        "bool": (),
        "literal": ("expected",),
        "list": ("items_schema",),
        "dict": ("keys_schema", "values_schema"),
        "nullable": ("schema",),
    }
    if kind not in known or set(schema) - _IGNORABLE_KEYS - set(known[kind]):
        return None
    if kind == "any":
        return _accept_any
    if kind == "str":
        return lambda value: value.__class__ is str
    if kind == "bool":
        return lambda value: value is True or value is False
    if kind == "literal":
        expected = schema["expected"]
        if not all(item.__class__ is str for item in expected):
            return None
        allowed = frozenset(expected)
        return lambda value: value.__class__ is str and value in allowed
    if kind == "nullable":
        inner = _fast_check(schema["schema"])
        if inner is None:
            return None
        return lambda value: value is None or inner(value)
    if kind == "list":
        items = _fast_check(schema.get("items_schema", {"type": "any"}))
        if items is None:
            return None
        if items is _accept_any:
            return lambda value: value.__class__ is list
        if _is_kind(schema.get("items_schema"), "str"):  # the types of all items at C speed
            return lambda value: value.__class__ is list and set(map(type, value)) <= _ONLY_STR
        return lambda value: value.__class__ is list and all(map(items, value))
    keys = schema.get("keys_schema", {"type": "any"})
    if keys.get("type") not in ("str", "any") or set(keys) - _IGNORABLE_KEYS:
        return None
    values_schema = schema.get("values_schema", {"type": "any"})
    values = _fast_check(values_schema)
    if values is None:
        return None
    string_keys = keys["type"] == "str"
    if string_keys and values is _accept_any:
        return lambda value: value.__class__ is dict and set(map(type, value)) <= _ONLY_STR
    if string_keys and _is_string_keyed_dict_of_any(values_schema):
        # e.g. `properties: dict[str, dict[str, Any]]`: every inner key at once.
        return lambda value: (
            value.__class__ is dict
            and set(map(type, value)) <= _ONLY_STR
            and set(map(type, value.values())) <= _ONLY_DICT
            and set(map(type, set().union(*value.values()))) <= _ONLY_STR
        )

    def check_dict(value: Any) -> bool:
        if value.__class__ is not dict:
            return False
        if string_keys and not set(map(type, value)) <= _ONLY_STR:
            return False
        return values is _accept_any or all(map(values, value.values()))

    return check_dict


_ONLY_STR: Final = frozenset({str})
_ONLY_DICT: Final = frozenset({dict})


def _is_kind(schema: Any, kind: str) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") == kind
        and not (set(schema) - _IGNORABLE_KEYS)
    )


def _is_string_keyed_dict_of_any(schema: Any) -> bool:
    if not (isinstance(schema, dict) and schema.get("type") == "dict"):
        return False
    if set(schema) - _IGNORABLE_KEYS - {"keys_schema", "values_schema"}:
        return False
    keys, values = schema.get("keys_schema"), schema.get("values_schema", {"type": "any"})
    return _is_kind(keys, "str") and _is_kind(values, "any")


def _member_test(schema: Any, check: _Check, name: str, namespace: dict[str, Any]) -> str:
    """A Python expression on `m` equal to `check(m)`: inline for the common kinds, else a call."""
    kind = schema.get("type")
    if check is _accept_any:
        return "True"
    if kind == "str":
        return "m.__class__ is str"
    if kind == "bool":
        return "(m is True or m is False)"
    if kind == "literal":
        namespace[name] = frozenset(schema["expected"])
        return f"(m.__class__ is str and m in {name})"
    namespace[name] = check
    return f"{name}(m)"


def _compile_as_is_or_exact(
    members: list[tuple[str, bool, Any]], exact: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """One Python function: the dict itself when every member plainly fits, else `exact(value)`.

    Compiled from the members' core schemas (as `dataclasses` compiles `__init__`): one frame
    and inline tests keep the common case cheap, and no dict is built (codegen/README.md).
    The member names are written with `repr`; they come from the generated models, not the wire.

    Args:
        members: (wire name, required, core schema) of each declared member; every schema has a
            fast check (`_fast_check` is not None).
        exact: the exact validator's `validate_python`, for everything else.
    """
    namespace: dict[str, Any] = {"ABSENT": _ABSENT, "exact": exact}
    tests = ["value.__class__ is dict"]
    for index, (key, required, schema) in enumerate(members):
        check = _fast_check(schema)
        if check is None:
            raise TypeError(f"no fast check for member {key!r}")
        test = _member_test(schema, check, f"check_{index}", namespace)
        if required:
            tests.append(f"(m := value.get({key!r}, ABSENT)) is not ABSENT and {test}")
        else:
            tests.append(f"((m := value.get({key!r}, ABSENT)) is ABSENT or {test})")
    # Then every key a string (an unknown member's name is a strict `str` too): a plain loop
    # costs less than a set of the key types for the few keys such an object has.
    source = (
        "def as_is_or_exact(value):\n"
        f"    if {' and '.join(tests)}:\n"
        "        for key in value:\n"
        "            if key.__class__ is not str:\n"
        "                return exact(value)\n"
        "        return value\n"
        "    return exact(value)\n"
    )
    # The source is built above from the models' own member names, never from the wire.
    exec(source, namespace)
    function: Callable[[Any], Any] = namespace["as_is_or_exact"]
    return function


class AsDict:
    """`Annotated` metadata of a JSON-object member a user fills by hand (`inputSchema`,
    `outputSchema`, a result's `_meta`): typed `dict[str, Any]`, checked as `model`.

    The value is validated against the members `model` (a generated `WireModel` of that JSON
    object) declares, by their wire names, with the model's strictness and unknown members kept
    where the model is open (pydantic's typed-dict validator, so no model instance is built).

    A `dict` that plainly fits (every declared member of exactly the declared JSON type) is kept
    as it is: the attribute is the very dict passed to `model_validate` or to the constructor, not
    a copy, as pydantic keeps an `Any` value (copy it before changing it in place). Any other value
    goes to the exact validator, which refuses it with the member's path or returns a new dict
    with the same members; `model_validate_json` always builds a new dict.

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
        extra_behavior = config.get("extra_fields_behavior", "ignore")
        extras_schema = fields_schema.get("extras_schema")
        exact = core_schema.typed_dict_schema(
            fields,
            extra_behavior=extra_behavior,
            extras_schema=extras_schema,
            strict=config.get("strict", False),
        )
        checks = [
            (key, field["required"], _fast_check(field["schema"])) for key, field in fields.items()
        ]
        extras_as_is = _fast_check(extras_schema or {"type": "any"}) is _accept_any
        if extra_behavior != "allow" or not extras_as_is or any(c is None for _, _, c in checks):
            return exact  # no fast path: every value goes through the exact validator
        as_is_or_exact = _compile_as_is_or_exact(
            [(key, field["required"], field["schema"]) for key, field in fields.items()],
            SchemaValidator(exact).validate_python,
        )
        return core_schema.json_or_python_schema(
            json_schema=exact,
            python_schema=core_schema.no_info_plain_validator_function(
                as_is_or_exact, json_schema_input_schema=exact
            ),
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


__all__ = [
    "NOT_NULL",
    "AsDict",
    "JSONInteger",
    "MemberTag",
    "PresentTag",
    "WireModel",
    "result_type_tag",
]
