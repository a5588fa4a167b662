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
- `model_validate` and `model_validate_json` are the compiled validator's own `validate_python`
  and `validate_json` (the same options and results as pydantic's, without its Python wrapper:
  `WireModel`).

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

#: The core-schema kinds a fast check covers, and the keys each may have besides the ignorable.
_CHECKED_KINDS: Final = {
    "any": frozenset(),
    "str": frozenset(),
    "bool": frozenset(),
    "literal": frozenset({"expected"}),
    "list": frozenset({"items_schema"}),
    "dict": frozenset({"keys_schema", "values_schema"}),
    "nullable": frozenset({"schema"}),
}

#: What a fast check does when a value does not plainly fit: the exact validator decides.
_EXACT: Final = "return exact(value)"

_ANY: Final = {"type": "any"}


def _plain(schema: Any, kind: str) -> bool:
    """Whether `schema` is the core schema of `kind` with nothing that changes what it accepts."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == kind
        and not (set(schema) - _IGNORABLE_KEYS)
    )


def _fast_check(schema: Any, name: str, depth: int, namespace: dict[str, Any]) -> list[str] | None:
    """Python statements that fall through only when `name` holds a value the strict core
    `schema` accepts unchanged, and otherwise `return exact(value)`.

    Covers the shapes of the hand-filled JSON objects (`str`, `bool`, string literals, `any`,
    lists, string-keyed dicts, `nullable`, nested to any depth); anything else (constraints,
    references, functions) gives None: no fast check, the exact validator always runs. A value
    that does not plainly fit is not necessarily invalid: the exact validator decides and
    explains. The statements test classes with `is` (`bool` is not an `int`, a `str` subclass is
    left to pydantic) and loop over containers inline: one frame for the whole object, which
    costs far less than a call or a set per container (codegen/README.md, "Speed and size").

    Args:
        schema: a core schema (a member's, an item's or a value's).
        name: the Python name holding the value; `depth` names the loop variables beneath it.
        namespace: the generated function's globals; a literal's allowed values are added.
    """
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind not in _CHECKED_KINDS or set(schema) - _IGNORABLE_KEYS - _CHECKED_KINDS[kind]:
        return None
    if kind == "any":
        return []
    if kind == "str":
        return [f"if {name}.__class__ is not str: {_EXACT}"]
    if kind == "bool":
        return [f"if {name} is not True and {name} is not False: {_EXACT}"]
    if kind == "literal":
        expected = schema["expected"]
        if not all(item.__class__ is str for item in expected):
            return None
        allowed = f"allowed_{len(namespace)}"
        namespace[allowed] = frozenset(expected)
        return [f"if {name}.__class__ is not str or {name} not in {allowed}: {_EXACT}"]
    if kind == "nullable":
        inner = _fast_check(schema["schema"], name, depth, namespace)
        if not inner:
            return inner
        return [f"if {name} is not None:", *_indented(inner)]
    if kind == "list":
        item = f"item_{depth}"
        inner = _fast_check(schema.get("items_schema", _ANY), item, depth + 1, namespace)
        if inner is None:
            return None
        head = [f"if {name}.__class__ is not list: {_EXACT}"]
        return head + ([f"for {item} in {name}:", *_indented(inner)] if inner else [])
    keys = schema.get("keys_schema", _ANY)
    if not (_plain(keys, "str") or _plain(keys, "any")):
        return None
    key, item = f"key_{depth}", f"value_{depth}"
    inner = _fast_check(schema.get("values_schema", _ANY), item, depth + 1, namespace)
    if inner is None:
        return None
    head = [f"if {name}.__class__ is not dict: {_EXACT}"]
    key_check = [f"if {key}.__class__ is not str: {_EXACT}"] if _plain(keys, "str") else []
    if inner:
        return head + [f"for {key}, {item} in {name}.items():", *_indented(key_check + inner)]
    if key_check:
        return head + [f"for {key} in {name}:", *_indented(key_check)]
    return head


def _indented(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def _compile_as_is_or_exact(
    members: list[tuple[str, bool, Any]], exact: Callable[[Any], Any]
) -> Callable[[Any], Any] | None:
    """One Python function: the dict itself when every member plainly fits, else `exact(value)`.

    Compiled from the members' core schemas (as `dataclasses` compiles `__init__`): one frame
    and inline tests keep the common case cheap, and no dict is built (codegen/README.md).
    Unknown members are kept as they are (their values are JSON `any`); every key must be an
    exact `str`. The member names are written with `repr`; they come from the generated models,
    not the wire.

    Args:
        members: (wire name, required, core schema) of each declared member.
        exact: the exact validator's `validate_python`, for everything else.

    Returns:
        The function, or None when a member's schema has no fast check (`_fast_check`).
    """
    namespace: dict[str, Any] = {"ABSENT": _ABSENT, "exact": exact}
    body = [f"if value.__class__ is not dict: {_EXACT}"]
    for key, required, schema in members:
        checks = _fast_check(schema, "member", 0, namespace)
        if checks is None:
            return None
        if required:
            body += [f"member = value.get({key!r}, ABSENT)", f"if member is ABSENT: {_EXACT}"]
            body += checks
        elif checks:  # `in`, then the lookup: cheaper than `get` for a member usually absent
            body += [f"if {key!r} in value:", f"    member = value[{key!r}]", *_indented(checks)]
    body += ["for key in value:", f"    if key.__class__ is not str: {_EXACT}", "return value"]
    source = "def as_is_or_exact(value):\n" + "".join(f"    {line}\n" for line in body)
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
        as_is_or_exact = None
        if extra_behavior == "allow" and _plain(extras_schema or _ANY, "any"):
            as_is_or_exact = _compile_as_is_or_exact(
                [(key, field["required"], field["schema"]) for key, field in fields.items()],
                SchemaValidator(exact).validate_python,
            )
        if as_is_or_exact is None:
            return exact  # no fast path: every value goes through the exact validator
        return core_schema.json_or_python_schema(
            json_schema=exact,
            python_schema=core_schema.no_info_plain_validator_function(
                as_is_or_exact, json_schema_input_schema=exact
            ),
        )

    def __repr__(self) -> str:
        return f"AsDict({self.model.__name__})"


class _CompiledValidator:
    """A class attribute that is the model's compiled validator's method itself (e.g.
    `Tool.model_validate` is `Tool.__pydantic_validator__.validate_python`).

    pydantic's `model_validate` and `model_validate_json` are Python functions that pass their
    options on to these methods; a call through them costs a Python frame and six keyword
    arguments, about 3.5k CPU instructions, as much as validating a small model
    (codegen/README.md, "Speed and size"). The methods take the same options with the same
    meaning. The first access builds the model's validator as pydantic's own call would.

    Args:
        method: the `SchemaValidator` method, `"validate_python"` or `"validate_json"`.
    """

    def __init__(self, method: str) -> None:
        self.method = method

    def __get__(self, instance: object, owner: type[BaseModel]) -> Any:
        return getattr(owner.__pydantic_validator__, self.method)

    def __repr__(self) -> str:
        return f"_CompiledValidator({self.method!r})"


class WireModel(BaseModel):
    """A model of one definition of an MCP schema: snake_case attributes, wire-name aliases.

    `model_validate(obj, *, strict, extra, from_attributes, context, by_alias, by_name)` and
    `model_validate_json(...)` are pydantic's, with the same options and results, called
    without pydantic's Python wrapper (`_CompiledValidator`); `by_alias=False` without
    `by_name=True` raises pydantic-core's `ValueError` instead of `PydanticUserError`.
    """

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


# Set after the class is made: pydantic reads the class body for fields, and these are none.
WireModel.model_validate = _CompiledValidator("validate_python")  # type: ignore[method-assign,assignment]
WireModel.model_validate_json = _CompiledValidator("validate_json")  # type: ignore[method-assign,assignment]


__all__ = [
    "NOT_NULL",
    "AsDict",
    "JSONInteger",
    "MemberTag",
    "PresentTag",
    "WireModel",
    "result_type_tag",
]
