"""Spec examples per version, and the two independent checks the conformance tests compare.

Sources (both vendored with provenance):
- `schema/<version>/examples/<Definition>/*.json` — the spec repository's own examples
  (2026-07-28 and draft), for every definition the generated module has a model of;
- `tests/fixtures/corpus/{tools,results}/spec-docs/<version>--tools-mdx-L<n>.json` — the
  `tools/list` and `tools/call` results shown on each version's server/tools page
  (tests/fixtures/corpus/SOURCES.md), so that older versions have examples too.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import referencing
import referencing.jsonschema
from conduit_mcp_wire import VERSIONS, module_for

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schema"
CORPUS = ROOT / "tests" / "fixtures" / "corpus"

#: The definitions whose examples must validate and round-trip (issue: foundation, part 2).
REQUIRED = (
    "Tool",
    "CallToolResult",
    "ListToolsResult",
    "CallToolResultResponse",
    "ListToolsResultResponse",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
)


@dataclass(frozen=True)
class Example:
    """One example instance of one definition of one spec version."""

    version: str
    definition: str
    path: Path
    instance: Any

    @property
    def id(self) -> str:
        """A short test id, e.g. `2026-07-28/Tool/with-no-parameters`."""
        return f"{self.version}/{self.definition}/{self.path.stem}"


def _spec_docs(version: str) -> Iterator[tuple[str, Path]]:
    for kind, definition in (("tools", "ListToolsResult"), ("results", "CallToolResult")):
        for path in sorted((CORPUS / kind / "spec-docs").glob(f"{version}--*.json")):
            yield definition, path


def iter_examples(version: str) -> Iterator[Example]:
    """Every example of `version` that has a generated model, in a stable order."""
    module = module_for(version)
    folder = SCHEMA_DIR / version / "examples"
    if folder.is_dir():
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            if hasattr(module, sub.name):
                for path in sorted(sub.glob("*.json")):
                    yield Example(version, sub.name, path, _load(path))
    for definition, path in _spec_docs(version):
        instance = _load(path)
        # tools/call may answer with an InputRequiredResult from 2026-07-28 on (basic "Result
        # types"): classify by the spec's own discriminator.
        if isinstance(instance, dict) and instance.get("resultType") == "input_required":
            definition = "InputRequiredResult"
        yield Example(version, definition, path, instance)


def unmodelled_folders(version: str) -> tuple[list[tuple[str, str, int]], list[str]]:
    """The examples folders of `version` that `iter_examples` skips.

    Returns:
        (folders naming no definition of the version's schema, each as (folder relative to the
        project, the JSON Pointer it names, its file count); names of folders whose definition
        exists but has no generated model).
    """
    folder = SCHEMA_DIR / version / "examples"
    if not folder.is_dir():
        return [], []
    schema = _schema(version)
    key = "$defs" if "$defs" in schema else "definitions"
    module = module_for(version)
    missing, outside = [], []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        if sub.name not in schema[key]:
            count = len(list(sub.glob("*.json")))
            missing.append((str(sub.relative_to(ROOT)), f"/{key}/{sub.name}", count))
        elif not hasattr(module, sub.name):
            outside.append(sub.name)
    return missing, outside


def all_examples() -> list[Example]:
    """`iter_examples` over every generated version."""
    return [example for version in VERSIONS for example in iter_examples(version)]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = _load(SCHEMA_DIR / version / "schema.json")
    return loaded


@functools.cache
def _validator(version: str, definition: str) -> jsonschema.protocols.Validator:
    full = _schema(version)
    key = "$defs" if "$defs" in full else "definitions"
    cls = jsonschema.validators.validator_for(full)
    resource = referencing.Resource.from_contents(
        full, default_specification=referencing.jsonschema.specification_with(full["$schema"])
    )
    registry: referencing.Registry[Any] = referencing.Registry().with_resource("urn:mcp", resource)
    return cls({"$ref": f"urn:mcp#/{key}/{definition}"}, registry=registry)


def jsonschema_errors(version: str, definition: str, instance: Any) -> list[str]:
    """Validate with `jsonschema` against the official schema; return the error messages."""
    validator = _validator(version, definition)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


@functools.cache
def adapter(version: str, definition: str) -> pydantic.TypeAdapter[Any]:
    """A TypeAdapter of one generated definition: a model class or a type alias (`ContentBlock`)."""
    return pydantic.TypeAdapter(getattr(module_for(version), definition))


def model_check(version: str, definition: str, instance: Any) -> tuple[list[str], Any]:
    """Validate with the generated model as a user would (plain `model_validate`, which is
    strict by default); return (errors, dumped-or-None)."""
    target = getattr(module_for(version), definition)
    try:
        if isinstance(target, type):
            parsed = target.model_validate(instance)
        else:
            parsed = adapter(version, definition).validate_python(instance)
    except pydantic.ValidationError as exc:
        return [f"{list(e['loc'])}: {e['msg']}" for e in exc.errors()], None
    dumped = adapter(version, definition).dump_python(
        parsed, mode="json", by_alias=True, exclude_unset=True
    )
    return [], dumped


def by_name_check(version: str, definition: str, instance: Any) -> Any:
    """Rebuild a valid instance from attribute names; return it dumped with wire names.

    The instance is read by wire names, dumped by attribute names (`input_schema`, `meta`,
    `schema_`, ...), built again by keyword from those, and dumped by wire names: equal to the
    instance exactly when construction by attribute name and the aliases agree everywhere.
    Type aliases (unions such as `ContentBlock`) take no keywords: their value is read with
    `validate_python(..., by_name=True)`, the documented way to read attribute names.
    """
    target = getattr(module_for(version), definition)
    typed = adapter(version, definition)
    parsed = typed.validate_python(instance)
    by_name = typed.dump_python(parsed, mode="json", exclude_unset=True)
    rebuilt = (
        target(**by_name)
        if isinstance(target, type)
        else typed.validate_python(by_name, by_name=True)
    )
    return typed.dump_python(rebuilt, mode="json", by_alias=True, exclude_unset=True)
