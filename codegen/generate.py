"""Generate `generated/conduit_mcp_wire/` from the pinned MCP schemas.

Steps: `read_registry` (the versions and their order, from schema/PINNED.json) ->
`check_vendored` (every folder under schema/ pinned, every pin with its folder) -> `load_pinned`
(refuse a schema whose sha256 is not its pin, that is not JSON, or holds a dangling `$ref`) ->
`patch_schema` (codegen/patches.py, each patch checking its old value) -> `prune` (keep the
definitions reachable from the `ROOTS` in range, in file order) -> `check_class_names` (no
definition's class name taken) -> the tagged unions found from the schema's shape
(codegen/tagged_unions.py, checked against the previous version's) -> `run_codegen`
(datamodel-code-generator, pinned, with the naming table codegen/names.json; then
codegen/postprocess.py, with the `ToolsCallResult` alias from templates/answers.py.jinja) ->
header, package index and the `WireModel` base class from codegen/templates/ -> write, or
compare with `--check`. Which property of the models comes from which of these, and why:
codegen/README.md. Every refusal is a `GenerationError` whose message is one line naming the
file and the JSON Pointer; `main` prints it and exits 2, generated/ untouched.

schema/PINNED.json is the one version registry: the generated `conduit_mcp_wire.VERSIONS` and
`LATEST` come from it, and `conduit_mcp.client` takes them from `conduit_mcp_wire`. The bump recipe
is in schema/README.md.

Usage:
    python codegen/generate.py            # regenerate generated/conduit_mcp_wire/
    python codegen/generate.py --check    # regenerate into a temp folder; exit 1 on any drift
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jsonfile import InputError, dangling_refs, load_json_bytes, load_json_file, pointer
from patches import MISSING, PATCHES, Patch
from postprocess import (
    JSON_OBJECTS,
    PostprocessError,
    nullable_optional_members,
    postprocess,
)
from tagged_unions import Tagged, TaggingError
from tagged_unions import derive as derive_tagged_unions

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
PIN_FILE = SCHEMA_DIR / "PINNED.json"
OUTPUT_DIR = ROOT / "generated" / "conduit_mcp_wire"
TEMPLATES = Path(__file__).resolve().parent / "templates"
NAMES = Path(__file__).resolve().parent / "names.json"

# -- knobs -----------------------------------------------------------------------------------

#: The unreleased next revision's folder name; the only pinned version that is not a date.
DRAFT = "draft"


@dataclass(frozen=True)
class Root:
    """A definition the models are pruned to, for the pinned versions `since` .. `until`
    (inclusive, registry order; `until=None`: every later pin). A version in the range whose
    schema lacks the definition stops the generator, naming the entry (a renamed root is never
    skipped in silence)."""

    name: str
    since: str
    until: str | None = None


#: The definitions a client takes off the wire for tools, and the envelopes whose spec examples
#: the conformance tests round-trip, in the order module headers list them.
ROOTS = (
    Root("Tool", "2024-11-05"),
    Root("CallToolResult", "2024-11-05"),
    Root("ListToolsResult", "2024-11-05"),
    Root("CallToolResultResponse", "2026-07-28"),
    Root("ListToolsResultResponse", "2026-07-28"),
    # The other answers to tools/call (`ToolsCallResult`, templates/answers.py.jinja).
    Root("InputRequiredResult", "2026-07-28"),
    # Task-augmented calls (2025-11-25 server/tools); not in the schemas after it.
    Root("CreateTaskResult", "2025-11-25", until="2025-11-25"),
)

#: The answers to tools/call where the schema states none (before `CallToolResultResponse`,
#: 2026-07-28): these roots, in this order, where they are roots.
TOOLS_CALL_ANSWERS = ("CallToolResult", "CreateTaskResult")

#: Names a definition's class must not take in a generated module: dcg's root placeholder, the
#: names the modules import or define beside the models (templates/, postprocess.py).
RESERVED_NAMES = frozenset(
    {
        "Model",
        "WireModel",
        "ToolsCallResult",
        "Annotated",
        "Any",
        "AsDict",
        "ConfigDict",
        "Discriminator",
        "Field",
        "JSONInteger",
        "Literal",
        "MemberTag",
        "NOT_NULL",
        "PresentTag",
        "Tag",
        "TypeAliasType",
    }
)

DCG_ARGS = (
    "--input-file-type=jsonschema",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.10",
    # Unknown keys are data: `ignore` would silently strip whole inputSchemas.
    "--extra-fields=allow",
    # PEP 8 attributes, wire names as aliases (`input_schema` / `inputSchema`, `meta` / `_meta`,
    # `schema_` / `$schema`), as mcp_types does; WireModel (templates/_base.py.jinja) accepts
    # either name on construction and only wire names from the wire.
    "--snake-case-field",
    "--remove-special-field-name-prefix",
    "--base-class=conduit_mcp_wire._base.WireModel",
    "--use-field-description",
    "--use-schema-description",
    "--use-annotated",
    "--use-union-operator",
    # A union or a plain value type is a type alias (`ContentBlock`, `Role`, `MetaObject`), not a
    # RootModel: `result.content[0]` is the concrete block, `audience[0] == "user"` holds, and
    # `_meta` is a dict. Python 3.10 has no `type` statement, so dcg writes `TypeAliasType`.
    "--use-type-alias",
    "--use-standard-collections",
    "--enum-field-as-literal=all",
    "--keep-model-order",
    "--disable-timestamp",
    "--formatters",
    "black",
    "isort",
    # Keep byte/uri formats plain strings: Base64Str decodes (and fails on real image data),
    # AnyUrl rewrites URLs, so neither round-trips the wire bytes.
    "--type-mappings",
    "string+byte=string",
    "string+uri=string",
)


@dataclass(frozen=True)
class Pin:
    """One entry of schema/PINNED.json."""

    version: str
    source_repo: str
    source_path: str
    commit: str
    sha256: str


class GenerationError(Exception):
    """The generator refuses to run: its inputs are not what they claim to be (one line, naming
    the file and the place in it)."""


class PinMismatch(GenerationError):
    """A vendored schema's bytes do not match its pin, a version has no pin, or a folder under
    schema/ has none."""


class RegistryError(GenerationError):
    """schema/PINNED.json does not list its versions as a registry must (see `read_registry`)."""


class PatchMismatch(GenerationError):
    """A patch's old value is not what the schema holds: the spec moved under the patch."""


class SchemaError(GenerationError):
    """A vendored schema cannot be generated from: a dangling `$ref`, a root the range promises
    that is absent, a union that lost its tag, an optional member that admits null."""


class NamingError(GenerationError):
    """An entry of codegen/names.json does not fit (bad range, a name dcg no longer gives), or a
    definition's class name is taken (a public class is never renamed)."""


@dataclass(frozen=True)
class Registry:
    """The versions to generate, in the order schema/PINNED.json lists them."""

    versions: tuple[str, ...]
    latest: str


def _shown(path: Path) -> str:
    """`path` relative to the project, for messages."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _pins(pin_file: Path | None = None) -> dict[str, Any]:
    """schema/PINNED.json, parsed.

    Raises:
        RegistryError: not JSON, or not an object (one line: file, line, column, pointer).
    """
    path = PIN_FILE if pin_file is None else pin_file
    try:
        loaded = load_json_file(path, _shown(path))
    except InputError as exc:
        raise RegistryError(str(exc)) from None
    if not isinstance(loaded, dict):
        raise RegistryError(f"{_shown(path)}: the top level must be an object")
    return loaded


# -- steps -----------------------------------------------------------------------------------


def read_registry(pin_file: Path | None = None) -> Registry:
    """Read the version registry from schema/PINNED.json (`schemas`, in file order).

    Args:
        pin_file: the pin file; `None` means `PIN_FILE`.

    Returns:
        The versions oldest first, as listed, and `latest`: the last dated version.

    Raises:
        RegistryError: not JSON; no versions; an entry without a `version` string; a version
            that is neither a `YYYY-MM-DD` date nor `"draft"`; a version listed twice; dated
            versions not strictly oldest first; `"draft"` anywhere but last. The file order is
            the order, so it must already be the release order.
    """
    path = PIN_FILE if pin_file is None else pin_file
    shown = _shown(path)
    entries = _pins(path).get("schemas")
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"{shown}: /schemas must be a non-empty list of pins")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise RegistryError(f"{shown}: /schemas/{index}/version: missing or not a string")
    versions = tuple(str(entry["version"]) for entry in entries)
    dated = [v for v in versions if v != DRAFT]
    for version in dated:
        if not _is_date(version):
            raise RegistryError(
                f"{shown}: /schemas/{versions.index(version)}/version: {version!r} is neither"
                f" YYYY-MM-DD nor {DRAFT!r}"
            )
    if len(set(versions)) != len(versions):
        raise RegistryError(f"{shown}: /schemas: a version is listed twice: {', '.join(versions)}")
    if dated != sorted(dated):
        listed = ", ".join(dated)
        raise RegistryError(
            f"{shown}: /schemas: dated versions must be listed oldest first: {listed}"
        )
    if DRAFT in versions[:-1]:
        raise RegistryError(f"{shown}: /schemas: {DRAFT!r} must be the last version listed")
    if not dated:
        raise RegistryError(f"{shown}: /schemas: no released (dated) version is pinned")
    return Registry(versions=versions, latest=dated[-1])


def _is_date(version: str) -> bool:
    try:
        return date.fromisoformat(version).isoformat() == version
    except ValueError:
        return False


#: The members every entry of PINNED.json `schemas` has.
PIN_KEYS = (
    "version",
    "source_repo",
    "source_path",
    "commit",
    "git_blob",
    "sha256",
    "bytes",
    "local_path",
)


def check_vendored(registry: Registry) -> None:
    """Every folder under schema/ is pinned, and every pin has its folder.

    Raises:
        PinMismatch: a `schema/<name>/` holding a `schema.json` with no entry in `/schemas`
            (generating without it would delete that version's module); a pinned version whose
            file is missing; an `examples/` folder with no `/examples` entry, or a count of
            files that is not its entry's `files`; an `/examples` entry whose folder is gone.
    """
    pins = _pins()
    shown = _shown(PIN_FILE)
    for folder in sorted(p for p in SCHEMA_DIR.iterdir() if p.is_dir()):
        if (folder / "schema.json").exists() and folder.name not in registry.versions:
            raise PinMismatch(
                f"{_shown(folder)}/: vendored, but {shown} /schemas has no entry for"
                f" {folder.name!r}; refusing to generate (`make bump` writes both)"
            )
    for index, version in enumerate(registry.versions):
        if not (SCHEMA_DIR / version / "schema.json").is_file():
            raise PinMismatch(f"{shown}: /schemas/{index}: schema/{version}/schema.json is missing")
    entries = pins.get("examples", [])
    if not isinstance(entries, list):
        raise RegistryError(f"{shown}: /examples must be a list")
    listed: dict[str, tuple[int, Any]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise RegistryError(f"{shown}: /examples/{index}/version: missing or not a string")
        listed[entry["version"]] = (index, entry.get("files"))
    for version in registry.versions:
        folder = SCHEMA_DIR / version / "examples"
        if not folder.is_dir():
            if version in listed:
                index = listed[version][0]
                raise PinMismatch(f"{shown}: /examples/{index}: {_shown(folder)}/ is missing")
            continue
        if version not in listed:
            raise PinMismatch(
                f"{_shown(folder)}/: vendored, but {shown} /examples has no entry for {version!r}"
            )
        index, files = listed[version]
        count = sum(1 for p in folder.rglob("*") if p.is_file())
        if files != count:
            raise PinMismatch(
                f"{shown}: /examples/{index}/files: {files!r}, but {_shown(folder)}/ holds"
                f" {count} files"
            )
    for version, (index, _) in listed.items():
        if version not in registry.versions:
            raise PinMismatch(f"{shown}: /examples/{index}: {version!r} is not in /schemas")


def load_pinned(version: str) -> tuple[Pin, dict[str, Any]]:
    """Load a vendored schema after checking its sha256 against schema/PINNED.json.

    Raises:
        PinMismatch: the file's digest differs from its pin (both digests named), or the version
            has no pin.
        RegistryError: the pin lacks a member.
        SchemaError: the file is not JSON (line, column, pointer), not an object with
            `$defs` / `definitions`, or holds a `$ref` to a definition that is not there (the
            `$ref`'s pointer).
    """
    pins = _pins()
    shown = _shown(PIN_FILE)
    schemas = pins.get("schemas", [])
    found = [
        (i, p) for i, p in enumerate(schemas) if isinstance(p, dict) and p.get("version") == version
    ]
    if not found:
        raise PinMismatch(f"{shown}: /schemas has no pin for version {version}")
    index, entry = found[0]
    for key in PIN_KEYS:
        if key not in entry:
            raise RegistryError(f"{shown}: /schemas/{index}: no {key!r}")
    pin = Pin(
        version=version,
        source_repo=entry["source_repo"],
        source_path=entry["source_path"],
        commit=entry["commit"],
        sha256=entry["sha256"],
    )
    path = SCHEMA_DIR / version / "schema.json"
    try:
        data = path.read_bytes()
    except OSError:
        raise PinMismatch(f"{shown}: /schemas/{index}: {_shown(path)} is missing") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != pin.sha256:
        raise PinMismatch(
            f"{_shown(path)}: sha256 {actual} does not match its pin {pin.sha256}"
            f" in {shown} /schemas/{index}/sha256; refusing to generate"
        )
    return pin, check_schema(data, _shown(path))


def check_schema(data: bytes, shown: str) -> dict[str, Any]:
    """Parse a vendored schema and check what the generator relies on.

    Returns:
        The parsed schema.

    Raises:
        SchemaError: not JSON; not an object with `$schema` and `$defs` / `definitions`; a
            `$ref` naming no definition (its pointer and value; the first, and how many more).
    """
    try:
        schema = load_json_bytes(data, shown)
    except InputError as exc:
        raise SchemaError(str(exc)) from None
    if not isinstance(schema, dict) or not isinstance(schema.get(defs_key(schema)), dict):
        raise SchemaError(f"{shown}: /$defs: the schema has no definitions object")
    if not isinstance(schema.get("$schema"), str):
        raise SchemaError(f"{shown}: /$schema: missing")
    dangling = dangling_refs(schema, defs_key(schema))
    if dangling:
        where, ref = dangling[0]
        more = f" (and {len(dangling) - 1} more)" if len(dangling) > 1 else ""
        raise SchemaError(f"{shown}: {where}: $ref {ref!r} names no definition{more}")
    return schema


def defs_key(schema: dict[str, Any]) -> str:
    """`$defs` (2020-12 schemas) or `definitions` (draft-07 schemas)."""
    return "$defs" if "$defs" in schema else "definitions"


def _pointer_parts(pointer: str, key: str) -> list[str]:
    parts = pointer.replace("{defs}", key).split("/")[1:]
    return [p.replace("~1", "/").replace("~0", "~") for p in parts]


def in_range(
    since: str, until: str | None, version: str, order: tuple[str, ...], what: str
) -> bool:
    """Whether `version` lies in `since` .. `until` (inclusive) of `order` (the registry).

    Raises:
        GenerationError: a bound is not pinned (`what` names the table entry).
    """
    span = Patch(since, what, None, None, "", "", until)
    try:
        return span.applies_to(version, order)
    except ValueError as exc:
        raise GenerationError(str(exc).replace(f"patch {what}", what)) from None


def patch_schema(version: str, schema: dict[str, Any]) -> tuple[dict[str, Any], list[Patch]]:
    """Apply every patch whose version range holds `version` to a copy of `schema`.

    Raises:
        PatchMismatch: a patch's range names a version that is not pinned, its parent object is
            gone, or its old value is not what the schema holds (the spec moved: see "Dropping a
            patch" in schema/README.md). The message names codegen/patches.py and the patch.
    """
    order = read_registry().versions
    schema = copy.deepcopy(schema)
    applied = []
    for patch in PATCHES:
        try:
            if not patch.applies_to(version, order):
                continue
        except ValueError as exc:
            raise PatchMismatch(f"codegen/patches.py: {version}: {exc}") from None
        *parents, last = _pointer_parts(patch.pointer, defs_key(schema))
        node: Any = schema
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise PatchMismatch(
                f"codegen/patches.py: {version}: patch {patch.pointer} (since {patch.since}):"
                " its parent object is gone"
            )
        found = node.get(last, MISSING)
        if not (found is patch.old or found == patch.old):
            raise PatchMismatch(
                f"codegen/patches.py: {version}: patch {patch.pointer} expected"
                f" {_show(patch.old)}, found {_show(found)}"
            )
        if patch.new is MISSING:
            del node[last]
        else:
            node[last] = copy.deepcopy(patch.new)
        applied.append(patch)
    return schema, applied


def _show(value: Any) -> str:
    return "(absent)" if value is MISSING else repr(value)


def _refs(node: Any) -> list[str]:
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append(ref.rsplit("/", 1)[-1])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def roots_of(
    version: str, defs: dict[str, Any], order: tuple[str, ...] | None = None, key: str = "$defs"
) -> list[str]:
    """The `ROOTS` whose range holds `version`, in `ROOTS` order.

    Raises:
        SchemaError: a root in range is not a definition of the version (the entry and the
            absent pointer named: set its `until`, or follow the rename).
    """
    order = read_registry().versions if order is None else order
    found = []
    for root in ROOTS:
        if in_range(root.since, root.until, version, order, f"ROOTS {root.name}"):
            if root.name not in defs:
                raise SchemaError(
                    f"schema/{version}/schema.json: {pointer([key, root.name])}: absent, but"
                    f" codegen/generate.py ROOTS has {root.name} since {root.since}"
                    f" (until {root.until or 'every later pin'}); set its `until`, or name"
                    " the definition that replaces it"
                )
            found.append(root.name)
    return found


def prune(
    schema: dict[str, Any], roots: list[str] | None = None
) -> tuple[dict[str, Any], list[str], int]:
    """Keep only the definitions reachable from `roots` (default: the `ROOTS` names the schema
    has), in file order.

    Returns:
        (pruned schema, roots used, total definition count).
    """
    key = defs_key(schema)
    defs = schema[key]
    if roots is None:
        roots = [r.name for r in ROOTS if r.name in defs]
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(_refs(defs[name]))
    kept = {name: value for name, value in defs.items() if name in seen}
    return {"$schema": schema["$schema"], key: kept}, roots, len(defs)


def naming_table(version: str) -> tuple[dict[str, str], dict[str, str]]:
    """The entries of codegen/names.json for one version.

    Returns:
        (dcg class name -> our class name, `Class.wire_member` -> our attribute name), the forms
        dcg's `--model-name-map` and `--aliases` take.

    Raises:
        NamingError: not JSON, or an entry's range names a version that is not pinned.
    """
    try:
        table = load_json_file(NAMES, "codegen/names.json")
    except InputError as exc:
        raise NamingError(str(exc)) from None
    order = read_registry().versions
    models: dict[str, str] = {}
    members: dict[str, str] = {}
    for kind, target, key in (("models", models, "dcg_name"), ("members", members, "member")):
        for index, entry in enumerate(table[kind]):
            # The same inclusive range rule as a recorded patch.
            span = Patch(entry["since"], key, None, None, "", "", entry.get("until"))
            try:
                if span.applies_to(version, order):
                    target[entry[key]] = entry["name"]
            except ValueError as exc:
                raise NamingError(f"codegen/names.json: /{kind}/{index}: {exc}") from None
    return models, members


def _names_entry(kind: str, key: str, value: str) -> str:
    """`/models/6 (dcg_name 'Nope', since 2026-07-28)`: the pointer of a naming-table entry."""
    table = load_json_file(NAMES, "codegen/names.json")
    for index, entry in enumerate(table.get(kind, [])):
        if entry.get(key) == value:
            return f"/{kind}/{index} ({key} {value!r}, since {entry.get('since')})"
    return f"/{kind} ({key} {value!r})"


def class_name(definition: str) -> str:
    """The class name datamodel-code-generator gives a definition (`annotations` ->
    `Annotations`; the MCP schemas name their definitions as classes)."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", definition)
    return cleaned[:1].upper() + cleaned[1:]


def check_class_names(version: str, defs: dict[str, Any], key: str, taken: dict[str, str]) -> None:
    """Refuse a definition whose class name another one takes (dcg would rename a public class,
    e.g. `Annotations` to `AnnotationsModel`).

    Args:
        taken: class names already spoken for (the naming table's) -> what takes them.

    Raises:
        NamingError: the definition's pointer, its class name and what takes it.
    """
    owners = {name: "codegen/generate.py RESERVED_NAMES" for name in RESERVED_NAMES}
    owners.update(taken)
    for definition in defs:
        name = class_name(definition)
        where = pointer([key, definition])
        if name in owners:
            raise NamingError(
                f"schema/{version}/schema.json: {where}: its class name {name} is taken by"
                f" {owners[name]}; stopping (a public class is never renamed)"
            )
        owners[name] = where


def check_generated_names(
    version: str, source: str, defs: dict[str, Any], key: str, members: dict[str, str]
) -> None:
    """After dcg: every kept definition has its own class or alias, and every member entry of
    the naming table renamed an attribute.

    Raises:
        NamingError: a definition dcg named otherwise; a `/members` entry that matched nothing.
    """
    tree = ast.parse(source)
    top: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            top[node.targets[0].id] = node
    for definition in defs:
        if class_name(definition) not in top:
            raise NamingError(
                f"schema/{version}/schema.json: {pointer([key, definition])}: dcg gave no class"
                f" {class_name(definition)} (its name is taken); stopping (a public class is"
                " never renamed)"
            )
    for member, name in members.items():
        owner = member.partition(".")[0]
        node = top.get(owner)
        held = isinstance(node, ast.ClassDef) and any(
            isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == name
            for s in node.body
        )
        if not held:
            raise NamingError(
                f"codegen/names.json: {_names_entry('members', 'member', member)} matches no"
                f" attribute at {version}; set its `until`, or follow the rename"
            )


def json_objects_of(version: str) -> frozenset[str]:
    """The `postprocess.JSON_OBJECTS` entries whose range holds `version`."""
    order = read_registry().versions
    return frozenset(
        entry.name
        for entry in JSON_OBJECTS
        if in_range(entry.since, entry.until, version, order, f"JSON_OBJECTS {entry.name}")
    )


def run_codegen(
    pruned: dict[str, Any],
    header: str,
    workdir: Path,
    stem: str,
    answers: str,
    tagged: list[Tagged] | None = None,
) -> str:
    """Run datamodel-code-generator on one pruned schema; return the module source.

    Raises:
        NamingError: a class name of the naming table matched no model dcg generated, a
            definition's class is named otherwise, a member entry matched nothing.
        GenerationError: dcg failed, or the post-processing pass did not find what it expects.
    """
    version = version_of(stem)
    source = workdir / f"{stem}.json"
    target = workdir / f"{stem}.py"
    source.write_text(json.dumps(pruned, indent=1, ensure_ascii=False), encoding="utf-8")
    models, members = naming_table(version)
    names = workdir / f"{stem}.names.json"
    aliases = workdir / f"{stem}.aliases.json"
    names.write_text(json.dumps(models), encoding="utf-8")
    aliases.write_text(json.dumps(members), encoding="utf-8")
    cmd = [
        sys.executable,
        "-W",
        "ignore::FutureWarning",
        "-m",
        "datamodel_code_generator",
        f"--input={source}",
        f"--output={target}",
        f"--custom-file-header={header}",
        *DCG_ARGS,
        *([f"--model-name-map={names}"] if models else []),
        *([f"--aliases={aliases}"] if members else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise GenerationError(f"schema/{version}/schema.json: datamodel-codegen failed: {last}")
    if "matched no generated model" in done.stderr:
        unmatched = re.findall(r"'([^']+)'", done.stderr.split("matched no generated model", 1)[1])
        where = _names_entry("models", "dcg_name", unmatched[0] if unmatched else "")
        raise NamingError(
            f"codegen/names.json: {where} matches no class dcg generated at {version};"
            " set its `until`, or follow the rename"
        )
    dcg_source = target.read_text(encoding="utf-8")
    key = defs_key(pruned)
    check_generated_names(version, dcg_source, pruned[key], key, members)
    rewrites = [t.rewrite for t in tagged or [] if t.rewrite is not None]
    try:
        return postprocess(dcg_source, stem, answers, rewrites, json_objects_of(version))
    except PostprocessError as exc:
        raise GenerationError(str(exc)) from None


def version_of(stem: str) -> str:
    """`v2025_06_18` -> `2025-06-18`; `draft` -> `draft` (the inverse of `module_name`)."""
    return stem if stem == DRAFT else stem[1:].replace("_", "-")


def module_name(version: str) -> str:
    """`2025-06-18` -> `v2025_06_18`; `draft` -> `draft`."""
    return version if version == DRAFT else "v" + version.replace("-", "_")


def _render(template: str, **context: Any) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["format_code"] = lambda name: f"`{name}`"
    return env.get_template(template).render(**context)


def tools_call_arms(defs: dict[str, Any], key: str, roots: list[str]) -> tuple[str, ...]:
    """The definitions that answer tools/call: the arms of the schema's own
    `CallToolResultResponse.result` (in its order), else the `TOOLS_CALL_ANSWERS` that are
    roots of the version."""
    response = defs.get("CallToolResultResponse")
    result = response.get("properties", {}).get("result") if isinstance(response, dict) else None
    if isinstance(result, dict):
        arms = result.get("anyOf", [result])
        prefix = f"#/{key}/"
        names = [a.get("$ref", "")[len(prefix) :] for a in arms if isinstance(a, dict)]
        if names and all(names):
            return tuple(names)
    return tuple(name for name in TOOLS_CALL_ANSWERS if name in roots)


@dataclass(frozen=True)
class Prepared:
    """One version ready for dcg: its pruned schema, header, answers alias and tagged unions."""

    version: str
    pruned: dict[str, Any]
    header: str
    answers: str
    tagged: list[Tagged]
    arms: tuple[str, ...]
    required: tuple[str, ...]


def prepare(registry: Registry, tools: dict[str, str]) -> list[Prepared]:
    """Every version, checked and pruned, in registry order (see `build`).

    Raises:
        GenerationError: any check of the inputs fails (one line: the file and the pointer).
    """
    check_vendored(registry)
    prepared: list[Prepared] = []
    previous: list[Tagged] = []
    for version in registry.versions:
        shown = f"schema/{version}/schema.json"
        pin, schema = load_pinned(version)
        patched, applied = patch_schema(version, schema)
        key = defs_key(patched)
        roots = roots_of(version, patched[key], registry.versions, key)
        pruned, roots, total = prune(patched, roots)
        defs = pruned[key]
        nullable = nullable_optional_members(pruned)
        if nullable:
            # postprocess.mark_not_null would refuse the null these members allow.
            raise SchemaError(f"{shown}: {nullable[0]}: an optional member that admits null")
        models, _ = naming_table(version)
        check_class_names(version, defs, key, {n: "codegen/names.json" for n in models.values()})
        try:
            tagged = derive_tagged_unions(defs, key, previous)
        except TaggingError as exc:
            raise SchemaError(f"{shown}: {exc}") from None
        previous = tagged
        for union in tagged:
            if union.kind == "const":
                node: Any = pruned
                for part in _pointer_parts(union.site.pointer, key):
                    node = node[part]
                node.setdefault("discriminator", {"propertyName": union.members[0]})
        header = _render(
            "header.py.jinja",
            version=version,
            source_repo=pin.source_repo,
            source_path=pin.source_path,
            commit=pin.commit,
            sha256=pin.sha256,
            roots=roots,
            kept=len(defs),
            total=total,
            patches=[p.pointer.replace("{defs}", key) for p in applied],
            tagged=[union.describe() for union in tagged],
            **tools,
        ).rstrip("\n")
        arms = tools_call_arms(defs, key, roots)
        answers = _render("answers.py.jinja", version=version, arms=list(arms))
        result = defs.get("CallToolResult", {})
        required = tuple(sorted(result.get("required", []))) if isinstance(result, dict) else ()
        prepared.append(Prepared(version, pruned, header, answers, tagged, arms, required))
    return prepared


def tool_versions() -> dict[str, str]:
    """The pinned tools' versions a module header names."""
    return {
        "dcg_version": metadata.version("datamodel-code-generator"),
        "black_version": metadata.version("black"),
        "isort_version": metadata.version("isort"),
    }


def build(workdir: Path, jobs: list[Prepared] | None = None) -> dict[str, str]:
    """Produce every output file: file name -> text.

    Args:
        workdir: a temporary folder for dcg's input and output.
        jobs: `prepare`'s result, when the caller has it already.

    Raises:
        GenerationError: see `prepare` and `run_codegen`.
    """
    registry = read_registry()
    if jobs is None:
        jobs = prepare(registry, tool_versions())
    # dcg is a separate process per schema; two at a time fits the 2-core machines.
    with ThreadPoolExecutor(max_workers=2) as pool:
        sources = list(
            pool.map(
                lambda job: run_codegen(
                    job.pruned,
                    job.header,
                    workdir,
                    module_name(job.version),
                    job.answers,
                    job.tagged,
                ),
                jobs,
            )
        )
    files = {
        f"{module_name(job.version)}.py": text for job, text in zip(jobs, sources, strict=True)
    }
    files["__init__.py"] = _render(
        "__init__.py.jinja",
        roots=[root.name for root in ROOTS[:2]],
        modules=[(v, module_name(v)) for v in registry.versions],
        latest=registry.latest,
        arms=[(job.version, job.arms) for job in jobs],
        required=[(job.version, job.required) for job in jobs],
    )
    files["_base.py"] = _render("_base.py.jinja")
    files["py.typed"] = ""
    return files


def _diff(expected: dict[str, str], out_dir: Path) -> list[str]:
    problems = []
    present = {p.name for p in out_dir.iterdir() if p.is_file()} if out_dir.exists() else set()
    for name, text in sorted(expected.items()):
        path = out_dir / name
        if not path.exists():
            problems.append(f"missing: {path.relative_to(ROOT)}")
            continue
        current = path.read_text(encoding="utf-8")
        if current != text:
            diff = difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"committed/{name}",
                f"regenerated/{name}",
                n=2,
            )
            problems.append("".join(list(diff)[:60]))
    for name in sorted(present - set(expected)):
        problems.append(f"unexpected file: {(out_dir / name).relative_to(ROOT)}")
    return problems


def write(files: dict[str, str]) -> None:
    """Write `files` into `OUTPUT_DIR`, removing the version modules no longer generated."""
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    for stale in OUTPUT_DIR.glob("*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (OUTPUT_DIR / name).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Regenerate, or with `--check` compare; return the process exit code (2: the inputs are
    refused, one line on stderr; 1: `--check` found drift)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on any drift; write nothing")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="conduit-codegen-") as tmp:
            files = build(Path(tmp))
        registry = read_registry()
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # build() refused any schema whose digest is not its pin, so reaching here verified them all.
    print(
        f"pins verified: {len(registry.versions)} schemas match their sha256 in"
        f" {_shown(PIN_FILE)} ({', '.join(registry.versions)}; latest {registry.latest})"
    )
    if args.check:
        problems = _diff(files, OUTPUT_DIR)
        if problems:
            print("generated/ differs from a fresh generation:", file=sys.stderr)
            for problem in problems:
                print(problem, file=sys.stderr)
            return 1
        print(f"generated/ is up to date ({len(files)} files)")
        return 0
    write(files)
    print(f"wrote {len(files)} files to {_shown(OUTPUT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
