"""Names: from the schema or from the naming table (codegen/names.json), never positional."""

from __future__ import annotations

import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for
from typing_extensions import TypeAliasType

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import generate  # noqa: E402

from tests.spec_facts import requires_result_type  # noqa: E402

TABLE = json.loads((ROOT / "codegen" / "names.json").read_text(encoding="utf-8"))

#: dcg's names for what has no name of its own: the root, numbered or positional classes.
POSITIONAL = re.compile(r"^(Model|Content|Params|Items?|.*\d|.*(AnyOf|OneOf|AllOf)Item)$")


def public_names(version: str) -> dict[str, Any]:
    """The classes and type aliases a version's module defines (not what it imports)."""
    module = module_for(version)
    names = {}
    for name, value in vars(module).items():
        if isinstance(value, TypeAliasType) or (
            isinstance(value, type) and value.__module__ == module.__name__
        ):
            names[name] = value
    return names


@pytest.mark.parametrize("version", VERSIONS)
def test_no_positional_or_placeholder_name(version: str) -> None:
    """No `Model`, `Items1`, `AnyOfItem`, `Params`, `Content` in any version."""
    names = public_names(version)
    assert names
    assert [n for n in names if POSITIONAL.match(n)] == []


@pytest.mark.parametrize("version", VERSIONS)
def test_content_block_has_one_name_in_every_version(version: str) -> None:
    """`ContentBlock` everywhere; the block a result holds is the concrete model."""
    module = module_for(version)
    assert "ContentBlock" in public_names(version)
    result = module.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": "x"}]}
        | ({"resultType": "complete"} if requires_result_type(version) else {})
    )
    assert type(result.content[0]) is module.TextContent


@pytest.mark.parametrize("version", VERSIONS)
def test_no_attribute_spells_a_namespaced_key(version: str) -> None:
    """`server_info`, not `io_modelcontextprotocol_server_info`."""
    for value in public_names(version).values():
        if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
            assert not [f for f in value.model_fields if f.startswith("io_")], value


def _mentions(annotation: Any, target: Any) -> bool:
    if annotation is target:
        return True
    value = getattr(annotation, "__value__", None)
    if value is not None and value is not annotation and _mentions(value, target):
        return True
    return any(_mentions(arg, target) for arg in typing.get_args(annotation))


@pytest.mark.parametrize("entry", TABLE["models"], ids=lambda e: e["name"])
def test_each_renamed_class_models_the_location_the_table_says(entry: dict[str, Any]) -> None:
    """`where` (Owner.member, `[]` for its items) holds the renamed class, in every version the
    entry covers: a table key that drifted to another class would fail here."""
    versions = [v for v in VERSIONS if generate.naming_table(v)[0].get(entry["dcg_name"])]
    assert versions, entry
    owner, member = entry["where"].removesuffix("[]").split(".")
    for version in versions:
        module = module_for(version)
        model = getattr(module, owner)
        model.model_rebuild()
        target = getattr(module, entry["name"])
        assert _mentions(model.model_fields[member].annotation, target), (version, entry)


@pytest.mark.parametrize("entry", TABLE["members"], ids=lambda e: e["name"])
def test_each_renamed_member_reads_its_wire_name(entry: dict[str, Any]) -> None:
    """The attribute is renamed; the wire name stays its alias."""
    owner, wire = entry["member"].split(".", 1)
    versions = [v for v in VERSIONS if generate.naming_table(v)[1].get(entry["member"])]
    assert versions, entry
    for version in versions:
        field = getattr(module_for(version), owner).model_fields[entry["name"]]
        assert field.alias == wire


def test_a_table_entry_that_matches_no_class_stops_the_generator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `dcg_name` dcg no longer gives (the spec or dcg moved) is a NamingError, not a no-op."""
    table = {**TABLE, "models": [*TABLE["models"], {**TABLE["models"][0], "dcg_name": "Nope"}]}
    names = tmp_path / "names.json"
    names.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setattr(generate, "NAMES", names)
    _, schema = generate.load_pinned("2024-11-05")
    patched, _ = generate.patch_schema("2024-11-05", schema)
    pruned, _, _ = generate.prune(patched)
    with pytest.raises(generate.NamingError, match="Nope"):
        generate.run_codegen(pruned, "# header", tmp_path, "v2024_11_05", "")
