"""The generator: pins, patches, pruning, headers and the version registry."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import conduit_mcp_wire
import pytest
from conduit_mcp_wire import LATEST, VERSIONS, module_for

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import generate  # noqa: E402
import patches  # noqa: E402

PINNED = json.loads((ROOT / "schema" / "PINNED.json").read_text(encoding="utf-8"))


#: The versions pinned when the registry was made (the issue: 2024-11-05 … 2026-07-28 and
#: draft). A spec bump adds later dates before draft; none of these leaves without a decision.
FIRST_PINNED = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "draft")


def test_registry_lists_the_versions_and_the_latest() -> None:
    """The issue: 2024-11-05 … 2026-07-28 and draft, and any later date a bump added before
    draft; LATEST is the newest date."""
    assert tuple(v for v in VERSIONS if v in FIRST_PINNED) == FIRST_PINNED
    added = [v for v in VERSIONS if v not in FIRST_PINNED]
    assert all(v > "2026-07-28" for v in added) and VERSIONS[-1] == "draft"
    assert LATEST == VERSIONS[-2]
    assert module_for("2025-06-18").__name__ == "conduit_mcp_wire.v2025_06_18"
    with pytest.raises(KeyError):
        module_for("2030-01-01")


def test_the_registry_is_schema_pinned_json_in_file_order() -> None:
    """One registry: the generated VERSIONS are PINNED.json's `schemas`, in the order listed."""
    assert VERSIONS == tuple(p["version"] for p in PINNED["schemas"])
    registry = generate.read_registry()
    assert (registry.versions, registry.latest) == (VERSIONS, LATEST)


def test_the_client_takes_its_versions_from_the_wire_package() -> None:
    """No third list: conduit_mcp.client's registry is the very tuple the generator wrote."""
    from conduit_mcp.client import _versions

    assert _versions.KNOWN_VERSIONS is VERSIONS
    assert _versions.LATEST is LATEST


@pytest.mark.parametrize(
    ("versions", "complaint"),
    [
        pytest.param([], "non-empty", id="empty"),
        pytest.param(["2025-06-18", "2024-11-05"], "oldest first", id="out-of-order"),
        pytest.param(["2024-11-05", "2024-11-05"], "listed twice", id="twice"),
        pytest.param(["draft", "2024-11-05"], "must be the last", id="draft-first"),
        pytest.param(["2024-11-05", "next"], "neither YYYY-MM-DD", id="not-a-date"),
        pytest.param(["2024-13-05"], "neither YYYY-MM-DD", id="month-13"),
        pytest.param(["draft"], "no released", id="draft-only"),
    ],
)
def test_a_malformed_registry_is_refused(
    tmp_path: Path, versions: list[str], complaint: str
) -> None:
    """read_registry: the file order is the release order, so it must be one."""
    pin_file = tmp_path / "PINNED.json"
    pin_file.write_text(json.dumps({"schemas": [{"version": v} for v in versions]}))
    with pytest.raises(generate.RegistryError, match=complaint):
        generate.read_registry(pin_file)


@pytest.mark.parametrize("pin", PINNED["schemas"], ids=lambda p: p["version"])
def test_vendored_schema_bytes_match_their_pin(pin: dict[str, str]) -> None:
    """Vendored unchanged: sha256 of each schema.json equals schema/PINNED.json."""
    data = (ROOT / "schema" / pin["local_path"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == pin["sha256"]
    assert len(data) == pin["bytes"]


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_module_header_names_its_source_and_digest(version: str) -> None:
    """Generated files announce themselves: source file and sha256 in the header."""
    pin = next(p for p in PINNED["schemas"] if p["version"] == version)
    module = module_for(version)
    assert module.__file__ is not None
    head = Path(module.__file__).read_text(encoding="utf-8")[:1500]
    assert head.startswith("# Generated; do not edit.")
    assert f"schema/{version}/schema.json" in head
    assert pin["sha256"] in head


def test_generation_refuses_a_schema_that_does_not_match_its_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue: generation refuses to run, naming the file and both digests."""
    schema_dir = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", schema_dir)
    target = schema_dir / "2025-06-18" / "schema.json"
    target.write_bytes(target.read_bytes() + b"\n")
    monkeypatch.setattr(generate, "SCHEMA_DIR", schema_dir)
    monkeypatch.setattr(generate, "PIN_FILE", schema_dir / "PINNED.json")
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    with pytest.raises(generate.PinMismatch) as info:
        generate.load_pinned("2025-06-18")
    message = str(info.value)
    actual = hashlib.sha256(target.read_bytes()).hexdigest()
    pinned = next(p["sha256"] for p in PINNED["schemas"] if p["version"] == "2025-06-18")
    assert "2025-06-18/schema.json" in message and actual in message and pinned in message


@pytest.mark.parametrize("version", VERSIONS)
def test_every_patch_for_a_version_still_applies(version: str) -> None:
    """Accounting: each patch asserts its old value; none silently stopped applying."""
    _, schema = generate.load_pinned(version)
    _, applied = generate.patch_schema(version, schema)
    expected = [p for p in patches.PATCHES if p.applies_to(version, VERSIONS)]
    assert applied == expected


def test_a_patch_whose_old_value_moved_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patches check their old value (the spec moved: fail with PatchMismatch, don't skip)."""
    moved = patches.Patch(
        since="draft",
        pointer="/{defs}/Tool/description",
        old="not the description",
        new="x",
        why="test",
        drop_when="test",
    )
    monkeypatch.setattr(generate, "PATCHES", (moved,))
    _, schema = generate.load_pinned("draft")
    with pytest.raises(generate.PatchMismatch, match=r"/\{defs\}/Tool/description expected"):
        generate.patch_schema("draft", schema)


def test_a_patch_whose_parent_is_gone_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A renamed definition is a PatchMismatch too, not a KeyError from deep in the walk."""
    gone = patches.Patch(
        since="draft",
        pointer="/{defs}/NoSuchDefinition/discriminator",
        old=patches.MISSING,
        new={"propertyName": "type"},
        why="test",
        drop_when="test",
    )
    monkeypatch.setattr(generate, "PATCHES", (gone,))
    _, schema = generate.load_pinned("draft")
    with pytest.raises(generate.PatchMismatch, match="parent object is gone"):
        generate.patch_schema("draft", schema)


def test_a_patch_bounded_by_an_unpinned_version_fails_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dropping a pin under a patch's bound is caught, not read as "the patch does not apply"."""
    stale = patches.Patch(
        since="2024-11-05",
        until="2024-12-31",
        pointer="/{defs}/Tool/x",
        old=patches.MISSING,
        new=1,
        why="test",
        drop_when="test",
    )
    monkeypatch.setattr(generate, "PATCHES", (stale,))
    _, schema = generate.load_pinned("2024-11-05")
    with pytest.raises(generate.PatchMismatch, match="'2024-12-31' is not pinned"):
        generate.patch_schema("2024-11-05", schema)


@pytest.mark.parametrize(
    ("since", "until", "expected"),
    [
        pytest.param("2024-11-05", "2025-03-26", ["2024-11-05", "2025-03-26"], id="closed"),
        pytest.param("2026-07-28", None, list(VERSIONS[VERSIONS.index("2026-07-28") :]), id="open"),
        pytest.param("draft", None, ["draft"], id="draft-only"),
    ],
)
def test_a_patch_range_is_inclusive_in_registry_order(
    since: str, until: str | None, expected: list[str]
) -> None:
    """Patch.applies_to: `since` .. `until` both included; `None` runs to the last pin."""
    patch = patches.Patch(since, "/x", None, None, "test", "test", until)
    assert [v for v in VERSIONS if patch.applies_to(v, VERSIONS)] == expected


def test_every_patch_says_why_and_when_it_can_be_dropped() -> None:
    """schema/README.md's drop recipe needs each patch's condition written down."""
    for patch in patches.PATCHES:
        assert patch.why.strip() and patch.drop_when.strip(), patch.pointer


def test_the_generator_has_no_assert_statements() -> None:
    """`python -O` strips asserts: the generator's checks must raise instead."""
    import ast

    for name in ("generate.py", "patches.py"):
        tree = ast.parse((ROOT / "codegen" / name).read_text(encoding="utf-8"))
        assert not [node for node in ast.walk(tree) if isinstance(node, ast.Assert)], name


def test_prune_keeps_reachable_definitions_in_file_order() -> None:
    """The pre-step: only what Tool/CallToolResult (and the list/response roots) reach."""
    _, schema = generate.load_pinned("2024-11-05")
    pruned, roots, total = generate.prune(schema)
    kept = list(pruned["definitions"])
    assert roots == ["Tool", "CallToolResult", "ListToolsResult"]
    assert total == 79
    # Transcribed from schema/2024-11-05/schema.json: the definitions these three reach.
    assert kept == [
        "BlobResourceContents",
        "CallToolResult",
        "EmbeddedResource",
        "ImageContent",
        "ListToolsResult",
        "Role",
        "TextContent",
        "TextResourceContents",
        "Tool",
    ]
    order = list(schema["definitions"])
    assert kept == sorted(kept, key=order.index)


def test_generated_package_imports_with_pydantic_alone() -> None:
    """The wire package never imports conduit_mcp (generated and handwritten stay apart)."""
    code = (
        "import sys, conduit_mcp_wire\n"
        "for v in conduit_mcp_wire.VERSIONS: conduit_mcp_wire.module_for(v)\n"
        "assert not any(m == 'conduit_mcp' or m.startswith('conduit_mcp.') for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_content_blocks_are_a_discriminated_union() -> None:
    """Patch effect: an unknown block type fails once, at the tag, not once per arm."""
    import pydantic

    model = module_for("2026-07-28").CallToolResult
    with pytest.raises(pydantic.ValidationError) as info:
        model.model_validate({"content": [{"type": "video"}], "resultType": "complete"})
    assert info.value.error_count() == 1
    assert info.value.errors()[0]["type"] == "union_tag_invalid"


@pytest.mark.parametrize("version", VERSIONS)
def test_base64_and_uri_fields_stay_plain_strings(version: str) -> None:
    """--type-mappings: data is not decoded and URIs are not rewritten on a round trip."""
    module = module_for(version)
    block = {"type": "image", "data": "not//base64==", "mimeType": "image/png"}
    assert (
        module.ImageContent.model_validate(block).model_dump(by_alias=True, exclude_unset=True)
        == block
    )
    raw = {"uri": "HTTP://Example.COM:80/a/../b?q", "text": "t"}
    dumped = module.TextResourceContents.model_validate(raw).model_dump(
        by_alias=True, exclude_unset=True
    )
    assert dumped == raw


def test_unknown_keys_survive_a_round_trip_everywhere() -> None:
    """--extra-fields allow: `ignore` would silently strip inputSchema keywords."""
    module = module_for("2026-07-28")
    raw = {
        "name": "a",
        "inputSchema": {"type": "object", "$defs": {"x": {}}, "oneOf": [{"required": ["a"]}]},
        "x-vendor": 1,
        "_meta": {"com.example/k": [1, {"a": None}]},
    }
    assert (
        module.Tool.model_validate(raw).model_dump(mode="json", by_alias=True, exclude_unset=True)
        == raw
    )


def test_the_package_index_lists_exactly_the_generated_modules() -> None:
    """Accounting: no stale module files, none missing."""
    folder = Path(conduit_mcp_wire.__file__).parent
    # __init__ (the index) and _base (WireModel) are the two files that are not a version.
    on_disk = sorted(p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "_base"))
    assert on_disk == sorted(conduit_mcp_wire.MODULES.values())


def test_a_naming_table_member_entry_that_matches_nothing_stops_the_generator() -> None:
    """Issue 31: a `/members` entry in range whose attribute dcg did not write names itself."""
    source = "class ResultMetaObject(WireModel):\n    io_modelcontextprotocol_server_info: int\n"
    with pytest.raises(generate.NamingError) as info:
        generate.check_generated_names(
            "2026-07-28",
            source,
            {"ResultMetaObject": {}},
            "$defs",
            {"ResultMetaObject.io.modelcontextprotocol/serverInfo": "server_info"},
        )
    assert str(info.value) == (
        "codegen/names.json: /members/0 (member"
        " 'ResultMetaObject.io.modelcontextprotocol/serverInfo', since 2026-07-28) matches no"
        " attribute at 2026-07-28; set its `until`, or follow the rename"
    )


def test_a_definition_dcg_named_otherwise_stops_the_generator() -> None:
    """Issue 31: a definition whose class dcg renamed (`Model` -> `ModelModel`) is refused."""
    with pytest.raises(generate.NamingError, match=r"/\$defs/Model: dcg gave no class Model"):
        generate.check_generated_names(
            "draft", "class ModelModel(WireModel):\n    a: int\n", {"Model": {}}, "$defs", {}
        )
    with pytest.raises(generate.NamingError, match=r"taken by codegen/generate\.py RESERVED_NAMES"):
        generate.check_class_names("draft", {"WireModel": {}}, "$defs", {})
