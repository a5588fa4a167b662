"""Tagged unions found from each schema's shape (codegen/tagged_unions.py): the arm read is the
one the schema allows, a renamed union keeps its tag, and the generator refuses a version where
a union the version before tagged can no longer be told apart."""

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


def _pruned(version: str) -> dict[str, Any]:
    _, schema = generate.load_pinned(version)
    pruned, _, _ = generate.prune(generate.patch_schema(version, schema)[0])
    return copy.deepcopy(pruned[generate.defs_key(pruned)])


def _key(version: str) -> str:
    return generate.defs_key(generate.load_pinned(version)[1])


def _tagged(defs: dict[str, Any], previous: Any = ()) -> dict[str, str]:
    found = tagged_unions.derive(defs, "$defs", previous)
    return {t.site.pointer: t.describe().split(": ", 1)[1] for t in found}


def test_the_unions_of_2026_07_28_are_tagged_as_their_shape_says() -> None:
    """conduit-defined from 2026-07-28 schema.json, read by hand: each block union requires a
    distinct `type` const per arm, each input request a `method` const; elicitation parameters
    share `mode` (optional in the form arm); primitive schemas share `type` values; embedded
    resource contents differ by `text` / `blob`; the tools/call answers have no tag
    (`resultType` is a plain string in both)."""
    assert _tagged(_pruned("2026-07-28")) == {
        "/$defs/ContentBlock": "by type (const)",
        "/$defs/ElicitRequestParams": "by mode (member)",
        "/$defs/EmbeddedResource/properties/resource": "by text, blob (present)",
        "/$defs/InputRequest": "by method (const)",
        "/$defs/PrimitiveSchemaDefinition": "by type (member)",
        "/$defs/SamplingMessageContentBlock": "by type (const)",
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_tags_every_union_its_previous_version_tagged(version: str) -> None:
    """The generator's rule, on every pinned version: every choice reads arms of the union,
    every arm is read by some choice, and no tag of the version before is lost."""
    previous: list[tagged_unions.Tagged] = []
    for earlier in VERSIONS[: VERSIONS.index(version) + 1]:
        previous = tagged_unions.derive(_pruned(earlier), _key(earlier), previous)
    found = previous
    assert any(t.site.owner == "EmbeddedResource" and t.kind == "present" for t in found)
    for union in found:
        if union.rewrite is not None:
            named = {arm for _, arms in union.rewrite.choices for arm in arms}
            assert named == set(union.rewrite.arms), union


def test_a_renamed_union_keeps_its_tag() -> None:
    """Issue 31: the tag comes from the union's shape, not its name."""
    defs = _pruned("2026-07-28")
    previous = tagged_unions.derive(_pruned("2026-07-28"), "$defs")
    defs["ElicitationParams"] = defs.pop("ElicitRequestParams")
    assert _tagged(defs, previous)["/$defs/ElicitationParams"] == "by mode (member)"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(
            lambda d: d["BlobResourceContents"]["properties"].update(size={"type": "integer"}),
            "EmbeddedResource/properties/resource: .* the arms differ beyond text, blob",
            id="present-arms-differ",
        ),
        pytest.param(
            lambda d: d["ElicitRequestURLParams"]["required"].remove("mode"),
            "ElicitRequestParams: .* more than one arm leaves mode optional",
            id="member-optional-twice",
        ),
        pytest.param(
            lambda d: d["BooleanSchema"]["properties"]["type"].pop("const"),
            "PrimitiveSchemaDefinition: .* no member with const or enum",
            id="member-without-values",
        ),
        pytest.param(
            lambda d: d.update(
                ElicitationParams=d.pop("ElicitRequestParams"),
                ElicitRequestURLParams={**d["ElicitRequestURLParams"], "required": ["message"]},
            ),
            "ElicitationParams: .* more than one arm",
            id="renamed-and-untaggable",
        ),
        pytest.param(
            lambda d: d.update(InputRequest={"oneOf": [{"type": "object"}, {"type": "object"}]}),
            "InputRequest: InputRequest was a tagged union .* no union of definitions",
            id="no-longer-a-union-of-definitions",
        ),
    ],
)
def test_a_union_that_can_no_longer_be_tagged_stops_the_generator(change: Any, reason: str) -> None:
    """Issue 31: a spec change never silently turns a tagged union into a plain one."""
    previous = tagged_unions.derive(_pruned("2026-07-28"), "$defs")
    defs = _pruned("2026-07-28")
    change(defs)
    with pytest.raises(tagged_unions.TaggingError, match=reason):
        tagged_unions.derive(defs, "$defs", previous)


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
