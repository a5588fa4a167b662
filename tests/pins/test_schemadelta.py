"""`schema_change`: whether an inputSchema / outputSchema change narrows, widens or both,
from jsonschema-rs's canonical schema algebra. Expected answers are worked out by hand from
JSON Schema 2020-12; each proven direction is backed by a witness value that the `jsonschema`
package (the test oracle) accepts under one schema and rejects under the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore, schema_change, schema_changes

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
# (old, new, expected, a value old accepts and new rejects, one new accepts and old rejects)
CASES: list[tuple[str, Any, Any, str, Any, Any]] = [
    ("required-added", CITY, {**CITY, "required": ["city"]}, "narrows", {}, None),
    (
        "maxLength-dropped",
        {"type": "string", "maxLength": 3},
        {"type": "string"},
        "widens",
        None,
        "long",
    ),
    ("type-swapped", {"type": "string"}, {"type": "integer"}, "both", "a", 1),
    ("output-schema-added", None, {"type": "object"}, "narrows", 1, None),
    (
        "minimum-raised",
        {"type": "integer", "minimum": 0},
        {"type": "integer", "minimum": 5},
        "narrows",
        1,
        None,
    ),
    (
        "same-set-other-spelling",
        {"type": "integer", "minimum": 1, "maximum": 1},
        {"const": 1},
        "unchanged",
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected", "only_old", "only_new"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_each_direction_is_proven_and_witnessed(
    old: Any, new: Any, expected: str, only_old: Any, only_new: Any
) -> None:
    assert schema_change(old, new) == expected
    before = True if old is None else old
    if only_old is not None:
        assert jsonschema.Draft202012Validator(before).is_valid(only_old)
        assert not jsonschema.Draft202012Validator(new).is_valid(only_old)
    if only_new is not None:
        assert jsonschema.Draft202012Validator(new).is_valid(only_new)
        assert not jsonschema.Draft202012Validator(before).is_valid(only_new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"type": "string", "pattern": "(?=a)"}, {"type": "string", "pattern": "(?=b)"}),
        ({"type": "array", "uniqueItems": True}, {"type": "array", "maxItems": 3}),
        ({"type": "object"}, {"$schema": "not a dialect", "type": "object"}),
        ({"type": "object"}, "not a schema"),
    ],
    ids=["lookaheads", "uniqueItems", "unknown-dialect", "not-a-schema"],
)
def test_what_the_algebra_cannot_decide_is_unknown(old: Any, new: Any) -> None:
    assert schema_change(old, new) == "unknown"


def test_only_the_schemas_that_differ_are_classified() -> None:
    old = {"name": "t", "inputSchema": CITY, "description": "a"}
    assert schema_changes(old, {**old, "description": "b"}) == {}
    assert schema_changes(old, {**old, "inputSchema": {**CITY, "required": ["city"]}}) == {
        "inputSchema": "narrows"
    }


def test_pins_changes_says_narrows_inputs_at_a_glance(tmp_path: Path) -> None:
    store = tmp_path / "pins.db"
    raw = {"name": "get_weather", "inputSchema": CITY}
    with PinStore(store) as pins:
        pins.approve("w", Tool.from_wire("w", raw), approver="alice")
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"tools": [{**raw, "inputSchema": {**CITY, "required": ["city"]}}]}))
    runner = CliRunner()
    result = runner.invoke(
        app, ["pins", "changes", str(page), "--store", str(store), "--server-id", "w"]
    )
    assert result.exit_code == 1 and "inputSchema narrows" in result.stdout
    result = runner.invoke(
        app, ["pins", "changes", str(page), "--store", str(store), "--server-id", "w", "--json"]
    )
    assert json.loads(result.stdout)["schemas"] == {"get_weather": {"inputSchema": "narrows"}}


def test_a_schema_too_large_for_the_algebra_is_unknown_without_asking_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """conduit-defined (a hostile review: the review page and `pins pending` ask this of a
    server's schemas): the algebra's time grows faster than the schema (5,000 properties took
    8.5 s of CPU, 500 took 0.1 s); a schema of more than `MAX_SCHEMA_NODES` JSON values is
    "unknown" at once, and the algebra never sees it. A small change still gets its verdict."""
    import jsonschema_rs

    from conduit_mcp.pins._schemadelta import MAX_SCHEMA_NODES

    asked: list[Any] = []
    real = jsonschema_rs.canonicalize

    def canonicalize(schema: Any) -> Any:
        asked.append(schema)
        return real(schema)

    monkeypatch.setattr(jsonschema_rs, "canonicalize", canonicalize)
    count = MAX_SCHEMA_NODES  # {"type": ...} per property: two values each, and more
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(count)}}
    wider = {**wide, "required": ["p0"]}
    assert schema_change(wide, wider) == "unknown"
    assert asked == []
    assert schema_change({"type": "string"}, {"type": "string", "maxLength": 5}) == "narrows"
    assert len(asked) == 2
