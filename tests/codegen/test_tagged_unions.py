"""Unions tagged by a member's value or by which member is present (codegen/tagged_unions.py):
the arm read is the one the schema allows, and the generator refuses a schema that no longer
supports a recorded tag."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest
from conduit_mcp_wire import VERSIONS, module_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "codegen"))
import generate
import tagged_unions

LATEST = module_for("2026-07-28")


def _block(resource: dict[str, Any]) -> Any:
    result = LATEST.CallToolResult.model_validate(
        {"content": [{"type": "resource", "resource": resource}], "resultType": "complete"}
    )
    return result.content[0].resource


def test_a_resource_is_read_as_the_contents_its_members_allow() -> None:
    """conduit-defined from the schema: `text` (a string) and `blob` are each required by one
    arm; an arm takes the other's member as an unknown one."""
    assert type(_block({"uri": "u", "text": "t"})).__name__ == "TextResourceContents"
    assert type(_block({"uri": "u", "blob": "YQ=="})).__name__ == "BlobResourceContents"
    # `text` is no string: only the blob arm can hold it, `text` kept as an unknown member.
    blob = _block({"uri": "u", "text": 5, "blob": "YQ=="})
    assert type(blob).__name__ == "BlobResourceContents"
    assert blob.model_extra == {"text": 5}
    text = _block({"uri": "u", "text": "t", "blob": 5})
    assert type(text).__name__ == "TextResourceContents" and text.model_extra == {"blob": 5}
    with pytest.raises(pydantic.ValidationError):
        _block({"uri": "u"})


def test_elicitation_parameters_are_read_by_mode() -> None:
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(LATEST.ElicitRequestParams)
    form = {"type": "object", "properties": {}}
    assert isinstance(
        adapter.validate_python({"message": "m", "requestedSchema": form}),
        LATEST.ElicitRequestFormParams,
    )
    assert isinstance(
        adapter.validate_python({"mode": "url", "message": "m", "url": "https://x"}),
        LATEST.ElicitRequestURLParams,
    )
    with pytest.raises(pydantic.ValidationError):
        adapter.validate_python({"mode": "url", "message": "m", "requestedSchema": form})


def test_primitive_schemas_are_read_by_type() -> None:
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(LATEST.PrimitiveSchemaDefinition)
    assert type(adapter.validate_python({"type": "integer"})).__name__ == "NumberSchema"
    assert type(adapter.validate_python({"type": "boolean"})).__name__ == "BooleanSchema"
    titled = adapter.validate_python({"type": "string", "oneOf": [{"const": "a", "title": "A"}]})
    assert type(titled).__name__ == "TitledSingleSelectEnumSchema"
    with pytest.raises(pydantic.ValidationError):
        adapter.validate_python({"type": "object"})


@pytest.mark.parametrize("version", VERSIONS)
def test_every_recorded_tag_is_derived_from_the_schema(version: str) -> None:
    _, schema = generate.load_pinned(version)
    patched, _ = generate.patch_schema(version, schema)
    pruned, _, _ = generate.prune(patched)
    defs = pruned[generate.defs_key(pruned)]
    rewrites = tagged_unions.derive(defs)
    assert any(r.owner == "EmbeddedResource" for r in rewrites)
    for rewrite in rewrites:
        named = {arm for _, arms in rewrite.choices for arm in arms}
        assert named == set(rewrite.arms), rewrite


def _latest_defs() -> dict[str, Any]:
    _, schema = generate.load_pinned("2026-07-28")
    pruned, _, _ = generate.prune(generate.patch_schema("2026-07-28", schema)[0])
    return copy.deepcopy(pruned[generate.defs_key(pruned)])


def test_a_schema_that_no_longer_supports_a_tag_stops_the_generator() -> None:
    defs = _latest_defs()
    defs["BlobResourceContents"]["properties"]["size"] = {"type": "integer"}
    with pytest.raises(tagged_unions.TaggingError, match="differ beyond"):
        tagged_unions.derive(defs)
    defs = _latest_defs()
    defs["ElicitRequestURLParams"]["required"].remove("mode")
    with pytest.raises(tagged_unions.TaggingError, match="more than one arm"):
        tagged_unions.derive(defs)
    defs = _latest_defs()
    del defs["BooleanSchema"]["properties"]["type"]["const"]
    with pytest.raises(tagged_unions.TaggingError, match="no const or enum"):
        tagged_unions.derive(defs)


def test_a_union_that_is_not_dcgs_stops_the_postprocessing() -> None:
    import postprocess

    rewrite = tagged_unions.Rewrite(
        alias="ElicitRequestParams",
        owner=None,
        prop=None,
        arms=("ElicitRequestFormParams", "ElicitRequestURLParams"),
        choices=(("form", ("ElicitRequestFormParams",)), ("url", ("ElicitRequestURLParams",))),
        discriminator='MemberTag("mode", {"form": "form", "url": "url"}, absent="form")',
    )
    moved = 'ElicitRequestParams = TypeAliasType("ElicitRequestParams", ElicitRequestURLParams)\n'
    with pytest.raises(postprocess.PostprocessError, match="ElicitRequestParams"):
        postprocess.tag_unions(moved, "v", [rewrite])
