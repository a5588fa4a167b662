"""The JSON Schema 2020-12 keyword table the OpenAI and Anthropic adapters share (and Gemini
falls back to): one handler per keyword, and the sources of the draft-04/06/07 translations.

Sub-schemas are walked (`_translate.SchemaWalk`); every other value is checked against the shape
the 2020-12 meta-schema requires for its keyword (a value of the wrong shape is dropped, noted);
draft-04/06/07 spellings become their 2020-12 keywords. Unknown keywords are kept.

Spec: JSON Schema 2020-12 Core and Validation; the 2020-12 meta-schema.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..client._errors import json_type_name
from ..client._jsonrules import Link
from ._translate import DRAFT_2020_12, ROOT, Handler, JSONObject, Rule, SchemaWalk, clean_text


def drop_keyword(detail: str) -> Handler:
    """A handler that drops the keyword with a note saying `detail`."""

    def handler(
        walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
    ) -> None:
        walk.notes.at(path, key, "dropped", detail)

    return handler


def _schema(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    walk.schema(dst, key, value, path)


def _schema_map(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    walk.schema_map(dst, key, value, path)


def _schema_list(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    walk.schema_list(dst, key, value, path)


def checked(test: Callable[[Any], bool], expected: str) -> Handler:
    """A handler that keeps the keyword when `test(value)` holds, else drops it (noted)."""

    def handler(
        walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
    ) -> None:
        if test(value):
            dst[key] = value
        else:
            walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not {expected}")

    return handler


def _text(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str):
        dst[key] = clean_text(value, walk.notes, (path, key))
    else:
        walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not a string")


def is_finite_number(value: object) -> bool:
    """A JSON number that every provider can carry (no bool, NaN, infinity or 10**400)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _non_negative_int(value: object) -> bool:
    if isinstance(value, float) and is_finite_number(value) and value.is_integer():
        return value >= 0
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _positive_number(value: object) -> bool:
    return is_finite_number(value) and value > 0  # type: ignore[operator]


def _unique_strings(value: object) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(item, str) for item in value)
        and len(set(value)) == len(value)
    )


def is_regex(value: object) -> bool:
    """A string Python's `re` compiles (what a JSON Schema validator here can check)."""
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
    return True


JSON_TYPES: Final = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _type(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str) and value in JSON_TYPES:
        dst[key] = value
        return
    if isinstance(value, list):
        kept: list[str] = []
        for item in value:
            if isinstance(item, str) and item in JSON_TYPES and item not in kept:
                kept.append(item)
        if kept:
            dst[key] = kept[0] if len(kept) == 1 else kept
            if len(kept) != len(value):
                walk.notes.at(path, key, "rewritten", "unknown or repeated types removed")
            return
    walk.notes.at(path, key, "dropped", "not a JSON Schema type or list of types")


def _required(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(value, list):
        walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not a list")
        return
    kept = list(dict.fromkeys(item for item in value if isinstance(item, str)))
    if len(kept) != len(value):
        walk.notes.at(path, key, "rewritten", "non-string or repeated names removed")
    dst[key] = kept


def _enum(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, list):
        dst[key] = value
    else:
        walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not a list")


def _dependent_required(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, dict) and all(_unique_strings(v) for v in value.values()):
        dst[key] = value
    else:
        walk.notes.at(path, key, "dropped", "not an object of unique string lists")


def _pattern_properties(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, dict):
        bad = [name for name in value if not is_regex(name)]
        if bad:
            value = {name: sub for name, sub in value.items() if name not in bad}
            for name in bad:
                walk.notes.at((path, key), name, "dropped", "not a regular expression")
    walk.schema_map(dst, key, value, path)


def _ref(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str):
        dst[key] = value
        if value.startswith("#/"):
            walk.refs.append(dst)
    else:
        walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not a reference")


# -- draft-04/06/07 idioms as 2020-12 (JSON Schema 2020-12 Core, Appendix "Changes") ---------------

_ANCHOR: Final = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")


def _items(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(value, list):
        walk.schema(dst, key, value, path)
        return
    # Draft 2019-09 and earlier: an array of items is a tuple. 2020-12 spells it prefixItems;
    # the old additionalItems (absent: anything) becomes items.
    if "prefixItems" in src:
        walk.notes.at(path, key, "dropped", "tuple items next to prefixItems")
        return
    if value:
        walk.schema_list(dst, "prefixItems", value, path, source_key=key)
        walk.move(path, "items", "prefixItems")
        walk.notes.at(path, key, "rewritten", "tuple items as prefixItems (2020-12)")
    else:
        walk.notes.at(path, key, "dropped", "empty tuple items")
    if "additionalItems" in src:
        walk.schema(dst, "items", src["additionalItems"], path, source_key="additionalItems")
        walk.move(path, "additionalItems", "items")
        walk.notes.at(path, "additionalItems", "rewritten", "as items after prefixItems (2020-12)")


def _additional_items(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(src.get("items"), list):
        # Draft-07 9.3.1.2: ignored unless items is an array; 2020-12 has no such keyword.
        walk.notes.at(path, key, "dropped", "no effect without tuple items")
    # with tuple items: handled by _items


def _exclusive_bound(bound: str) -> Handler:
    def handler(
        walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
    ) -> None:
        if is_finite_number(value):
            dst[key] = value
            return
        if value is True and is_finite_number(src.get(bound)):
            # Draft-04: a boolean that makes `minimum`/`maximum` exclusive; 2020-12 (and 06)
            # spell the bound itself as the exclusive keyword.
            dst[key] = src[bound]
            walk.notes.at(path, key, "rewritten", f"draft-04 boolean as the {bound} value")
            return
        detail = "draft-04 false (no effect)" if value is False else "not a number"
        walk.notes.at(path, key, "dropped", detail)

    return handler


def _bound(exclusive: str) -> Handler:
    def handler(
        walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
    ) -> None:
        if not is_finite_number(value):
            walk.notes.at(path, key, "dropped", "not a finite number")
        elif src.get(exclusive) is not True:
            dst[key] = value
        # else: the draft-04 exclusive keyword carries it (see _exclusive_bound)

    return handler


def _definitions(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(src.get("$defs"), dict):
        # Both present: the names may clash, so the old one stays where it is (the 2020-12
        # meta-schema still describes `definitions`).
        walk.schema_map(dst, key, value, path)
        return
    walk.schema_map(dst, "$defs", value, path, source_key=key)
    if "$defs" in dst:
        walk.move(path, "definitions", "$defs")
        walk.notes.at(path, key, "rewritten", "definitions as $defs (2020-12)")


def _dependencies(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(value, dict):
        walk.notes.at(path, key, "dropped", f"{json_type_name(value)}, not an object")
        return
    names = {k: v for k, v in value.items() if isinstance(v, list)}
    schemas = {k: v for k, v in value.items() if not isinstance(v, list)}
    if names and "dependentRequired" not in src:
        kept = {k: v for k, v in names.items() if _unique_strings(v)}
        if kept:
            dst["dependentRequired"] = kept
    if schemas and "dependentSchemas" not in src:
        walk.schema_map(dst, "dependentSchemas", schemas, path, source_key=key)
        walk.move(path, "dependencies", "dependentSchemas")
    walk.notes.at(
        path, key, "rewritten", "split into dependentRequired and dependentSchemas (2020-12)"
    )


def _id(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if not isinstance(value, str):
        dst[key] = value  # not a draft-04 id: an unknown keyword, kept
        return
    base, _hash, fragment = value.partition("#")
    if base and "$id" not in src:
        dst["$id"] = base + ("#" if _hash and not fragment else "")
        walk.notes.at(path, key, "rewritten", "draft-04 id as $id")
    elif not base and fragment and _ANCHOR.fullmatch(fragment) and "$anchor" not in src:
        dst["$anchor"] = fragment
        walk.notes.at(path, key, "rewritten", "draft-04 id fragment as $anchor")
    else:
        walk.notes.at(path, key, "dropped", "draft-04 id with no 2020-12 equivalent here")


def _dollar_id(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str) and re.fullmatch(r"[^#]*#?", value):
        dst[key] = value
    elif isinstance(value, str) and value.startswith("#") and _ANCHOR.fullmatch(value[1:]):
        if "$anchor" not in src:
            dst["$anchor"] = value[1:]
        walk.notes.at(path, key, "rewritten", "draft-06/07 $id fragment as $anchor")
    else:
        walk.notes.at(path, key, "dropped", "not a 2020-12 $id (no fragment allowed)")


def _dollar_schema(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if path is not ROOT:
        walk.notes.at(path, key, "dropped", "$schema below the root")
    elif value != DRAFT_2020_12:
        dst[key] = DRAFT_2020_12
        walk.notes.at(path, key, "rewritten", "the schema is translated to 2020-12")
    else:
        dst[key] = value


def _anchor(
    walk: SchemaWalk, src: JSONObject, dst: JSONObject, key: str, value: Any, path: Link
) -> None:
    if isinstance(value, str) and _ANCHOR.fullmatch(value):
        dst[key] = value
    else:
        walk.notes.at(path, key, "dropped", "not an anchor name")


def _string(value: object) -> bool:
    return isinstance(value, str)


def _number(value: object) -> bool:
    return is_finite_number(value)


#: 2020-12 keyword -> handler: sub-schemas are walked; other values are checked against the
#: 2020-12 meta-schema's shape for the keyword (a value of the wrong shape is dropped, noted);
#: draft-04/06/07 spellings are translated. Unknown keywords are kept (2020-12 allows them).
JSON_SCHEMA_HANDLERS: Final[Mapping[str, Handler]] = {
    # applicators (2020-12 Core section 10)
    "properties": _schema_map,
    "patternProperties": _pattern_properties,
    "additionalProperties": _schema,
    "propertyNames": _schema,
    "dependentSchemas": _schema_map,
    "prefixItems": _schema_list,
    "items": _items,
    "contains": _schema,
    "allOf": _schema_list,
    "anyOf": _schema_list,
    "oneOf": _schema_list,
    "not": _schema,
    "if": _schema,
    "then": _schema,
    "else": _schema,
    "unevaluatedItems": _schema,
    "unevaluatedProperties": _schema,
    "contentSchema": _schema,
    "$defs": _schema_map,
    # core
    "$ref": _ref,
    "$dynamicRef": checked(_string, "a string"),
    "$id": _dollar_id,
    "$schema": _dollar_schema,
    "$anchor": _anchor,
    "$dynamicAnchor": _anchor,
    "$comment": checked(_string, "a string"),
    "$vocabulary": drop_keyword("only meaningful in a meta-schema"),
    # validation (2020-12 Validation section 6)
    "type": _type,
    "enum": _enum,
    "required": _required,
    "dependentRequired": _dependent_required,
    "multipleOf": checked(_positive_number, "a number above 0"),
    "maximum": _bound("exclusiveMaximum"),
    "minimum": _bound("exclusiveMinimum"),
    "exclusiveMaximum": _exclusive_bound("maximum"),
    "exclusiveMinimum": _exclusive_bound("minimum"),
    "maxLength": checked(_non_negative_int, "a non-negative integer"),
    "minLength": checked(_non_negative_int, "a non-negative integer"),
    "maxItems": checked(_non_negative_int, "a non-negative integer"),
    "minItems": checked(_non_negative_int, "a non-negative integer"),
    "maxContains": checked(_non_negative_int, "a non-negative integer"),
    "minContains": checked(_non_negative_int, "a non-negative integer"),
    "maxProperties": checked(_non_negative_int, "a non-negative integer"),
    "minProperties": checked(_non_negative_int, "a non-negative integer"),
    "uniqueItems": checked(lambda v: isinstance(v, bool), "a boolean"),
    "pattern": checked(is_regex, "a regular expression"),
    "format": checked(_string, "a string"),
    # meta-data (section 9)
    "title": _text,
    "description": _text,
    "deprecated": checked(lambda v: isinstance(v, bool), "a boolean"),
    "readOnly": checked(lambda v: isinstance(v, bool), "a boolean"),
    "writeOnly": checked(lambda v: isinstance(v, bool), "a boolean"),
    "examples": checked(lambda v: isinstance(v, list), "a list"),
    "contentEncoding": checked(_string, "a string"),
    "contentMediaType": checked(_string, "a string"),
    # draft-04/06/07 spellings
    "definitions": _definitions,
    "dependencies": _dependencies,
    "additionalItems": _additional_items,
    "id": _id,
    "$recursiveRef": drop_keyword("2019-09 keyword, not 2020-12"),
    "$recursiveAnchor": drop_keyword("2019-09 keyword, not 2020-12"),
}

#: Sources of the 2020-12 translation (shared by OpenAI and Anthropic).
JSON_SCHEMA_RULES: Final = (
    Rule(
        "items",
        "an array of items is a draft-2019-09 tuple: prefixItems in 2020-12, additionalItems "
        "becomes items",
        "JSON Schema 2020-12 Core 10.3.1.1-2 and its release notes ('prefixItems')",
    ),
    Rule(
        "exclusiveMinimum",
        "a boolean (draft-04) makes minimum exclusive; 2020-12 takes the bound as the value",
        "JSON Schema Validation 2020-12 6.2.3/6.2.5; draft-06 release notes",
    ),
    Rule("definitions", "renamed $defs; local $refs follow", "JSON Schema 2019-09 release notes"),
    Rule(
        "dependencies",
        "split into dependentRequired (arrays) and dependentSchemas (schemas)",
        "JSON Schema 2019-09 release notes",
    ),
    Rule("id", "draft-04 id is $id (a fragment is $anchor)", "JSON Schema draft-06 notes"),
    Rule(
        "*",
        "each keyword's value has the shape the 2020-12 meta-schema requires",
        "https://json-schema.org/draft/2020-12/schema (meta-schema)",
    ),
)
