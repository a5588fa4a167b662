"""The small pass of our own over datamodel-code-generator's output (see codegen/README.md).

Only what no dcg 0.89 option, template or recorded schema patch can express:

1. `drop_root_placeholder`: dcg names the pruned schema's root (which holds only `$defs`)
   `Model` and writes it as an alias of `Any`; it is no definition of the spec.
2. `mark_not_null`: an optional member whose schema does not admit `null` gets `NOT_NULL`
   (conduit_mcp_wire._base) in its `Annotated` metadata, so it reads as `None` when absent but
   refuses a `null` on the wire. dcg types every optional member `X | None = None`;
   `--strict-nullable` is read for OpenAPI only, `--use-missing-sentinel` turns every optional
   attribute's type into `X | MISSING` (a user then tests `is MISSING`, not `is None`), and dcg
   0.89 cannot render from a copy of its own BaseModel template (a custom template dir fails
   on the first multi-line docstring).

3. `type_json_objects`: the members holding one of `JSON_OBJECTS` (a JSON object a user fills
   by hand: `inputSchema`, `outputSchema`, a result's `_meta`) are typed `dict[str, Any]`,
   checked at run time by `AsDict(<model>)` (conduit_mcp_wire._base): `Tool(name="t",
   input_schema={"type": "object"})` type-checks, and `tool.input_schema` is the wire's dict,
   as in `mcp_types`. dcg types such a member with its model class and has no option to do
   otherwise.

4. `append_answers`: the per-version `ToolsCallResult` alias (templates/answers.py.jinja,
   rendered by generate.py) is appended. The spec has no definition of "the answer to
   tools/call", and at 2026-07-28 its arms are chosen by `resultType`, which the schema types as
   a plain string: no JSON Schema `discriminator` a patch could add would be true to it, so the
   alias uses pydantic's callable `Discriminator` (`result_type_tag`, conduit_mcp_wire._base).

5. `type_integers`: every `int` becomes `JSONInteger` (conduit_mcp_wire._base: `int`, and a
   float with no fraction read as that int), because JSON Schema's `integer` admits `1.0` and
   pydantic's strict `int` does not. dcg maps `integer` to `int` and `--type-mappings` only maps
   to other format types, not to a type of our own.

6. `tag_unions`: the unions of codegen/tagged_unions.py (tagged by a member's value shared by
   several arms or optional in one, or by which required member is present) get a callable
   pydantic `Discriminator` with one `Tag` per choice and an `"other"` choice holding every arm.
   A JSON Schema `discriminator` (patches.py) needs one `const` per arm; these unions have none.

Each step checks that it found what it expects, so a dcg upgrade that changes its output
stops the generator instead of silently skipping a step. The text is re-formatted with the
pinned black in the mode dcg itself used (88 columns, quotes as written), so an unchanged
input gives unchanged output.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

import black
from tagged_unions import Rewrite

#: What dcg writes for the schema root (with `--use-type-alias`).
ROOT_PLACEHOLDER = '\n\nModel = TypeAliasType("Model", Any)\n'

#: The import line of the base class dcg writes, and the same line with the marker.
BASE_IMPORT_PREFIX = "from conduit_mcp_wire._base import "
BASE_IMPORT = "from conduit_mcp_wire._base import WireModel\n"
BASE_IMPORT_WITH_MARKER = "from conduit_mcp_wire._base import NOT_NULL, AsDict, WireModel\n"


@dataclass(frozen=True)
class JsonObject:
    """A generated model of a JSON object a user fills by hand (step 3), for the pinned versions
    `since` .. `until` (inclusive, registry order; `until=None`: every later pin). A version in
    the range where no member holds it stops the generator, naming the entry."""

    name: str
    since: str
    until: str | None = None


#: The JSON objects of step 3. The naming table (codegen/names.json) gives these names to the
#: definitions dcg names after their member.
JSON_OBJECTS = (
    JsonObject("InputSchema", "2024-11-05"),  # Tool.inputSchema
    JsonObject("OutputSchema", "2025-06-18"),  # Tool.outputSchema
    JsonObject("ResultMetaObject", "2026-07-28"),  # a result's _meta
)

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310}, line_length=88, string_normalization=False
)


class PostprocessError(Exception):
    """dcg's output is not what a step of this pass expects."""


def add_base_import(source: str, stem: str, name: str) -> str:
    """Add `name` to the module's `from conduit_mcp_wire._base import ...` line, in isort's
    order (constants, classes, then functions; each alphabetical).

    Raises:
        PostprocessError: there is not exactly one such line.
    """
    lines = [line for line in source.splitlines() if line.startswith(BASE_IMPORT_PREFIX)]
    if len(lines) != 1:
        raise PostprocessError(f"{stem}: the import of WireModel is not where expected")
    names = set(lines[0][len(BASE_IMPORT_PREFIX) :].split(", ")) | {name}

    def isort_key(item: str) -> tuple[int, str]:
        kind = 0 if item.isupper() else 1 if item[0].isupper() else 2
        return kind, item

    line = BASE_IMPORT_PREFIX + ", ".join(sorted(names, key=isort_key))
    return source.replace(lines[0] + "\n", line + "\n")


def drop_root_placeholder(source: str, stem: str) -> str:
    """Remove `ROOT_PLACEHOLDER` from one module's source.

    Raises:
        PostprocessError: the placeholder is not there exactly once.
    """
    if source.count(ROOT_PLACEHOLDER) != 1:
        raise PostprocessError(f"{stem}: dcg's root placeholder `Model` is not where expected")
    return source.replace(ROOT_PLACEHOLDER, "")


def nullable_optional_members(schema: dict[str, Any]) -> list[str]:
    """Every optional member of the pruned schema whose own schema admits `null`.

    `mark_not_null` would wrongly refuse `null` for such a member; the generator refuses to run
    while there is one (none in any pinned version: the one nullable member, a task's `ttl` at
    2025-11-25, is required).

    Returns:
        JSON-pointer-like paths of the offending members, e.g. `/$defs/Task/properties/ttl`.
    """
    found: list[str] = []

    def admits_null(node: Any) -> bool:
        if not isinstance(node, dict):
            return False
        kind = node.get("type")
        return (
            kind == "null"
            or (isinstance(kind, list) and "null" in kind)
            or bool(node.get("nullable"))
        )

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                required = set(node.get("required", ()))
                for name, member in properties.items():
                    if name not in required and admits_null(member):
                        found.append(f"{path}/properties/{name}")
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}/{index}")

    walk(schema, "")
    return found


class _LineIndex:
    """Source offsets (str indices) of ast positions (lines from 1, UTF-8 byte columns)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

    def span(self, node: ast.expr) -> tuple[int, int]:
        if node.end_lineno is None or node.end_col_offset is None:
            raise PostprocessError("an annotation without an end position")
        return self.offset(node.lineno, node.col_offset), self.offset(
            node.end_lineno, node.end_col_offset
        )


def _is_annotated(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Annotated"
        and isinstance(node.slice, ast.Tuple)
    )


def _optional_none(annotation: ast.expr) -> ast.expr | None:
    """The `X | None` inside an annotation (bare or first argument of `Annotated`), else None."""
    inner = annotation
    if _is_annotated(annotation):
        inner = annotation.slice.elts[0]  # type: ignore[attr-defined]
    if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.BitOr)):
        return None
    if not (isinstance(inner.right, ast.Constant) and inner.right.value is None):
        return None
    # `Any | None`: the schema puts no type on the member, so null is one of its values.
    if isinstance(inner.left, ast.Name) and inner.left.id == "Any":
        return None
    return inner


def mark_not_null(source: str, stem: str) -> str:
    """Add `NOT_NULL` to every optional `X | None = None` member of every model class.

    Raises:
        PostprocessError: no member was marked, or the base-class import is not dcg's.
    """
    tree = ast.parse(source)
    index = _LineIndex(source)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if not (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.value, ast.Constant)
                and statement.value.value is None
                and _optional_none(statement.annotation) is not None
            ):
                continue
            annotation = statement.annotation
            start, end = index.span(annotation)
            text = source[start:end]
            if isinstance(annotation, ast.Subscript):  # Annotated[X | None, Field(...)]
                new = text[:-1].rstrip().rstrip(",") + ", NOT_NULL]"
            else:
                new = f"Annotated[{text}, NOT_NULL]"
            edits.append((start, end, new))
    if not edits:
        raise PostprocessError(f"{stem}: no optional member found to mark NOT_NULL")
    if "from typing import Annotated" not in source:
        raise PostprocessError(f"{stem}: dcg did not import typing.Annotated")
    if source.count(BASE_IMPORT) != 1:
        raise PostprocessError(f"{stem}: dcg's import of WireModel is not where expected")
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    return source.replace(BASE_IMPORT, BASE_IMPORT_WITH_MARKER)


def type_json_objects(source: str, stem: str, names: frozenset[str]) -> str:
    """Type every member holding one of `names` (the `JSON_OBJECTS` in range) as
    `dict[str, Any]` + `AsDict(model)`.

    Raises:
        PostprocessError: a name of `names` retyped no member (the entry names a model the
            version no longer has: set its `until`).
    """
    tree = ast.parse(source)
    edits: list[tuple[int, int, str]] = []
    found: set[str] = set()
    index = _LineIndex(source)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.AnnAssign):
                continue
            annotation = statement.annotation
            metadata: list[ast.expr] = []
            base = annotation
            if _is_annotated(annotation):
                elements = annotation.slice  # type: ignore[attr-defined]
                base, metadata = elements.elts[0], list(elements.elts[1:])
            optional = isinstance(base, ast.BinOp) and isinstance(base.op, ast.BitOr)
            named = base.left if optional else base  # type: ignore[attr-defined]
            if not (isinstance(named, ast.Name) and named.id in names):
                continue
            found.add(named.id)
            parts = ["dict[str, Any] | None" if optional else "dict[str, Any]"]
            parts += [ast.unparse(item) for item in metadata]
            parts.append(f"AsDict({named.id})")
            start, end = index.span(annotation)
            edits.append((start, end, f"Annotated[{', '.join(parts)}]"))
    for entry in JSON_OBJECTS:
        if entry.name in names and entry.name not in found:
            raise PostprocessError(
                f"codegen/postprocess.py: JSON_OBJECTS {entry.name} (since {entry.since}) types"
                f" no member at {stem}; set its `until`, or name the model that replaces it"
            )
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    return source


def type_integers(source: str, stem: str) -> str:
    """Replace every name `int` in the module with `JSONInteger` (imported from `_base`).

    Raises:
        PostprocessError: the base-class import is not where expected.
    """
    tree = ast.parse(source)
    index = _LineIndex(source)
    spans = [
        index.span(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "int"
    ]
    if not spans:
        return source
    for start, end in sorted(spans, reverse=True):
        source = source[:start] + "JSONInteger" + source[end:]
    return add_base_import(source, stem, "JSONInteger")


PYDANTIC_IMPORT = "from pydantic import ConfigDict, Field\n"
PYDANTIC_IMPORT_WITH_TAGS = "from pydantic import ConfigDict, Discriminator, Field, Tag\n"


def append_answers(source: str, stem: str, answers: str) -> str:
    """Append the rendered `ToolsCallResult` alias, with the imports it needs.

    Raises:
        PostprocessError: the imports to extend are not dcg's.
    """
    if "Tag(" in answers:
        if source.count(PYDANTIC_IMPORT) != 1:
            raise PostprocessError(f"{stem}: dcg's pydantic import is not where expected")
        source = source.replace(PYDANTIC_IMPORT, PYDANTIC_IMPORT_WITH_TAGS)
        source = add_base_import(source, stem, "result_type_tag")
    if "TypeAliasType" not in source:
        raise PostprocessError(f"{stem}: dcg did not import TypeAliasType")
    return source.rstrip("\n") + "\n" + answers


def _union_names(node: ast.expr) -> list[str] | None:
    """The names of a `A | B | C` expression, in order; None when it is anything else."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _union_names(node.left), _union_names(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _tagged_text(rewrite: Rewrite) -> str:
    choices = [
        f"Annotated[{' | '.join(arms)}, Tag({json.dumps(tag)})]" for tag, arms in rewrite.choices
    ]
    choices.append(f'Annotated[{" | ".join(rewrite.arms)}, Tag("other")]')
    return f"Annotated[{' | '.join(choices)}, Discriminator({rewrite.discriminator})]"


def tag_unions(source: str, stem: str, rewrites: list[Rewrite]) -> str:
    """Write each union of `rewrites` (codegen/tagged_unions.py) as a callable-discriminated
    union: one `Tag` per choice, an `"other"` choice holding every arm.

    Raises:
        PostprocessError: a union is not where expected or its arms are not the schema's.
    """
    if not rewrites:
        return source
    tree = ast.parse(source)
    index = _LineIndex(source)
    edits: list[tuple[int, int, str]] = []
    for rewrite in rewrites:
        found: ast.expr | None = None
        for node in tree.body:
            if rewrite.alias is not None and isinstance(node, ast.Assign):
                target = node.targets[0]
                value = node.value
                if (
                    isinstance(target, ast.Name)
                    and target.id == rewrite.alias
                    and isinstance(value, ast.Call)
                    and len(value.args) == 2
                ):
                    found = value.args[1]
            elif isinstance(node, ast.ClassDef) and node.name == rewrite.owner:
                for statement in node.body:
                    if (
                        isinstance(statement, ast.AnnAssign)
                        and isinstance(statement.target, ast.Name)
                        and statement.target.id == rewrite.prop
                    ):
                        found = statement.annotation
        where = rewrite.alias or f"{rewrite.owner}.{rewrite.prop}"
        if found is None or _union_names(found) != list(rewrite.arms):
            raise PostprocessError(f"{stem}: the union {where} is not dcg's {rewrite.arms}")
        start, end = index.span(found)
        edits.append((start, end, _tagged_text(rewrite)))
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    if source.count(PYDANTIC_IMPORT) == 1:
        source = source.replace(PYDANTIC_IMPORT, PYDANTIC_IMPORT_WITH_TAGS)
    elif PYDANTIC_IMPORT_WITH_TAGS not in source:
        raise PostprocessError(f"{stem}: dcg's pydantic import is not where expected")
    for rewrite in rewrites:
        source = add_base_import(source, stem, rewrite.discriminator.split("(", 1)[0])
    return source


def postprocess(
    source: str,
    stem: str,
    answers: str,
    rewrites: list[Rewrite] | None = None,
    json_objects: frozenset[str] = frozenset({"InputSchema"}),
) -> str:
    """Run every step on one module's source and re-format it (see the module docstring).

    Args:
        source: dcg's output for one version.
        stem: the module name, for messages.
        answers: the rendered templates/answers.py.jinja for that version.
        rewrites: the unions codegen/tagged_unions.py tags by a callable.
        json_objects: the `JSON_OBJECTS` names in range at that version.

    Raises:
        PostprocessError: a step did not find what it expects.
    """
    source = drop_root_placeholder(source, stem)
    source = type_json_objects(source, stem, json_objects)
    source = mark_not_null(source, stem)
    source = type_integers(source, stem)
    source = append_answers(source, stem, answers)
    source = tag_unions(source, stem, rewrites or [])
    return black.format_str(source, mode=BLACK_MODE)
