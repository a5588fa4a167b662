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

Each step checks that it found what it expects, so a dcg upgrade that changes its output
stops the generator instead of silently skipping a step. The text is re-formatted with the
pinned black in the mode dcg itself used (88 columns, quotes as written), so an unchanged
input gives unchanged output.
"""

from __future__ import annotations

import ast
from typing import Any

import black

#: What dcg writes for the schema root (with `--use-type-alias`).
ROOT_PLACEHOLDER = '\n\nModel = TypeAliasType("Model", Any)\n'

#: The import line of the base class dcg writes, and the same line with the marker.
BASE_IMPORT = "from conduit_mcp_wire._base import WireModel\n"
BASE_IMPORT_WITH_MARKER = "from conduit_mcp_wire._base import NOT_NULL, WireModel\n"

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310}, line_length=88, string_normalization=False
)


class PostprocessError(Exception):
    """dcg's output is not what a step of this pass expects."""


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


def _optional_none(annotation: ast.expr) -> ast.expr | None:
    """The `X | None` inside an annotation (bare or first argument of `Annotated`), else None."""
    inner = annotation
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
    ):
        inner = annotation.slice.elts[0]
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
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets; convert within the line.
        line = lines[lineno - 1]
        return offsets[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

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
            if annotation.end_lineno is None or annotation.end_col_offset is None:
                raise PostprocessError(f"{stem}: an annotation without an end position")
            start = offset(annotation.lineno, annotation.col_offset)
            end = offset(annotation.end_lineno, annotation.end_col_offset)
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


def postprocess(source: str, stem: str) -> str:
    """Run every step on one module's source and re-format it (see the module docstring).

    Raises:
        PostprocessError: a step did not find what it expects.
    """
    source = drop_root_placeholder(source, stem)
    source = mark_not_null(source, stem)
    return black.format_str(source, mode=BLACK_MODE)
