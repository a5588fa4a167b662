"""Row 10: what the exact check of `inputSchema` costs per tool, and the alternatives measured.

`.venv/bin/python bench/probe_asdict_check.py [--version V ...]` counts, under callgrind
(`bench/callgrind_segments.py`; figures the machine's load cannot move), the CPU instructions
per tool of `inputSchema`'s fast check (`AsDict`'s compiled `as_is_or_exact`, codegen's
templates/_base.py.jinja) on row 10's real corpus tools, and of variants of it, each run from a
Python loop over the same dicts (the loop and call cost ~0.9k of each figure):

- `generated`: the check the generated package compiles (its very source and globals);
- `properties unchecked`: without the check of `properties` (the floor of any such check);
- `isinstance keys`: `isinstance(key, str)` for every key instead of `key.__class__ is not str`;
- `type() keys`: `type(key) is not str`;
- `join per property`: the keys checked in C by `"".join` (TypeError for a key that is not a
  `str`; `str` subclasses pass, as in pydantic's strict `str`), one join per property;
- `one join over a chain`: the properties' classes in Python, then one `"".join` over
  `itertools.chain` of the property names and every property's keys;
- `map(type) + chain join`: the classes counted in C (`[*map(type, values)].count(dict)`), then
  the join over the chain;
- `one loop over a chain`: the inner keys in one Python loop over `chain.from_iterable`;
- `pydantic-core properties`: `properties` validated by a strict pydantic-core
  `dict[str, dict[str, Any]]` (which copies; its result is dropped);
- `exact validator`: the whole object by `AsDict`'s exact validator (pydantic-core's typed dict,
  which builds a new dict).

It also counts, per property (each property object of the corpus schemas), the key check alone:
the generated loop (`for key in d: if key.__class__ is not str`) against `"".join(d)`.

Every variant is checked first to return the very dict for each corpus schema and to refuse a
property that is not an object, and a non-`str` key in a property, the way the generated check
does. Only the versions whose `InputSchema.properties` is an object of objects apply
(2024-11-05 to 2025-11-25). Prints JSON: instructions per tool by version and variant.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from itertools import chain
from pathlib import Path
from typing import Annotated, Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as bench  # noqa: E402

#: Passes over the corpus schemas counted per variant (after one warm-up pass).
REPEATS = 10
#: The versions whose `InputSchema.properties` is `dict[str, dict[str, Any]]`.
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

#: The generated check of `properties`, as `_fast_check` writes it (indented in the function).
_PROPERTIES = """\
        for key_0, value_0 in member.items():
            if key_0.__class__ is not str: return exact(value)
            if value_0.__class__ is not dict: return exact(value)
            for key_1 in value_0:
                if key_1.__class__ is not str: return exact(value)
"""

#: Variant name -> the replacement of `_PROPERTIES` (None: the whole function replaced).
_REPLACED: dict[str, str | None] = {
    "generated": _PROPERTIES,
    "properties unchecked": "        pass\n",
    "isinstance keys": None,
    "type() keys": None,
    "join per property": """\
        try:
            join(member)
            for value_0 in member.values():
                if value_0.__class__ is not dict: return exact(value)
                join(value_0)
        except TypeError:
            return exact(value)
""",
    "one join over a chain": """\
        values = member.values()
        for value_0 in values:
            if value_0.__class__ is not dict: return exact(value)
        try:
            join(chain(member, *values))
        except TypeError:
            return exact(value)
""",
    "map(type) + chain join": """\
        values = member.values()
        if [*map(type, values)].count(dict) != len(member): return exact(value)
        try:
            join(chain(member, *values))
        except TypeError:
            return exact(value)
""",
    "one loop over a chain": """\
        for key_0, value_0 in member.items():
            if key_0.__class__ is not str: return exact(value)
            if value_0.__class__ is not dict: return exact(value)
        for key_1 in from_iterable(member.values()):
            if key_1.__class__ is not str: return exact(value)
""",
    "pydantic-core properties": """\
        try:
            properties_validator(member)
        except ValidationError:
            return exact(value)
""",
    "exact validator": None,
}


def _generated(version: str) -> tuple[str, dict[str, Any], Any]:
    """The source and globals of `InputSchema`'s compiled check, and the exact validator."""
    from conduit_mcp_wire import _base, module_for
    from pydantic import TypeAdapter

    captured: list[tuple[str, dict[str, Any]]] = []

    def spy(source: str, namespace: dict[str, Any]) -> None:
        captured.append((source, namespace))
        exec(source, namespace)  # the generated check's own source, from the models' names

    _base.exec = spy  # type: ignore[attr-defined]  # the module's `exec` shadows the builtin
    try:
        marker = _base.AsDict(module_for(version).InputSchema)
        adapter: Any = TypeAdapter(Annotated[dict[str, Any], marker])
    finally:
        del _base.exec  # type: ignore[attr-defined]
    source, namespace = captured[-1]
    return source, namespace, adapter.core_schema["json_schema"]


def variants(version: str) -> dict[str, Any]:
    """Variant name -> the check (value -> value or `exact(value)`), for `version`."""
    from pydantic_core import SchemaValidator, ValidationError
    from pydantic_core import core_schema as cs

    source, namespace, exact_schema = _generated(version)
    if _PROPERTIES not in source:
        raise SystemExit(f"{version}: InputSchema.properties is not an object of objects")
    strict_properties = cs.dict_schema(
        cs.str_schema(), cs.dict_schema(cs.str_schema(), cs.any_schema()), strict=True
    )
    extra = {
        "join": "".join,
        "chain": chain,
        "from_iterable": chain.from_iterable,
        "ValidationError": ValidationError,
        "properties_validator": SchemaValidator(strict_properties).validate_python,
    }
    keys = ("key_0", "key_1", "key")
    whole = {
        "isinstance keys": [
            (f"{k}.__class__ is not str", f"not isinstance({k}, str)") for k in keys
        ],
        "type() keys": [(f"{k}.__class__ is not str", f"type({k}) is not str") for k in keys],
    }
    out: dict[str, Any] = {}
    for name, replacement in _REPLACED.items():
        if name == "exact validator":
            out[name] = SchemaValidator(exact_schema).validate_python
            continue
        text = source
        if replacement is None:
            for old, new in whole[name]:
                text = text.replace(old, new)
        else:
            text = text.replace(_PROPERTIES, replacement)
        scope = {**namespace, **extra}
        exec(text, scope)  # the generated source, edited by the fixed replacements above
        out[name] = scope["as_is_or_exact"]
    return out


def _loop_keys(properties: list[dict[str, Any]]) -> None:
    """The generated inner check, per property object (the `per property` segment)."""
    for value_0 in properties:
        for key_1 in value_0:
            if key_1.__class__ is not str:
                raise SystemExit("a property with a key that is not a str")


def _join_keys(properties: list[dict[str, Any]]) -> None:
    """The same check in C: `"".join` raises TypeError for a key that is not a `str`."""
    join = "".join
    for value_0 in properties:
        join(value_0)


def _nothing(properties: list[dict[str, Any]]) -> None:
    """The loop over the property objects alone (subtracted from the two above)."""
    for _ in properties:
        pass


#: The per-property segments: name -> function of the list of property objects.
PER_PROPERTY = {"loop over keys": _loop_keys, "join": _join_keys, "nothing": _nothing}


def _refuses(check: Any, bad: dict[str, Any]) -> bool:
    """Whether `check` sends `bad` to the exact validator (which refuses it)."""
    from pydantic_core import ValidationError

    try:
        check(bad)
    except ValidationError:
        return True
    return False


def _child(versions: list[str], repeats: int) -> None:
    """The callgrind child: per version and variant, `repeats` passes over the schemas."""
    from bench.callgrind_segments import mark

    work = []
    for version in versions:
        schemas = [tool["inputSchema"] for tool in bench.generated_tool_inputs(version)]
        for name, check in variants(version).items():
            for schema in schemas:  # warm-up, and the check keeps the very dict
                kept = check(schema)
                if name != "exact validator" and kept is not schema:
                    raise SystemExit(f"{version} {name}: the dict was not kept")
            bad_value = {"type": "object", "properties": {"a": []}}
            bad_key = {"type": "object", "properties": {"a": {1: "x"}}}
            if name != "properties unchecked" and not (
                _refuses(check, bad_value) and _refuses(check, bad_key)
            ):
                raise SystemExit(f"{version} {name}: a bad property was not refused")
            work.append((check, schemas))
    schemas = [tool["inputSchema"] for tool in bench.generated_tool_inputs(versions[-1])]
    properties = [p for schema in schemas for p in schema.get("properties", {}).values()]
    gc.collect()
    gc.disable()
    mark()
    for check, schemas in work:
        for _ in range(repeats):
            for schema in schemas:
                check(schema)
        mark()
    for function in PER_PROPERTY.values():
        for _ in range(repeats):
            function(properties)
        mark()


def main(argv: list[str] | None = None) -> int:
    """Count every variant at every applicable version; print the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", choices=VERSIONS)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[1:], int(args.child[0]))
        return 0
    from bench.callgrind_segments import count

    versions = args.version or list(VERSIONS)
    labels = [f"{version} {name}" for version in versions for name in _REPLACED]
    labels += [f"per property {name}" for name in PER_PROPERTY]
    report: dict[str, Any] = {"loadavg_start": list(os.getloadavg())}
    script = [sys.executable, __file__, "--child", str(args.repeats), *versions]
    counts = count(script, labels)
    for version in versions:
        items = args.repeats * len(bench.generated_tool_inputs(version))
        report[version] = {name: counts[f"{version} {name}"] // items for name in _REPLACED}
    schemas = [tool["inputSchema"] for tool in bench.generated_tool_inputs(versions[-1])]
    properties = [p for schema in schemas for p in schema.get("properties", {}).values()]
    floor = counts["per property nothing"]
    report[f"per property ({versions[-1]}: {len(properties)} properties)"] = {
        name: (counts[f"per property {name}"] - floor) // (args.repeats * len(properties))
        for name in PER_PROPERTY
        if name != "nothing"
    }
    report["loadavg_end"] = list(os.getloadavg())
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
