"""Tool.from_wire, the lifted fields, display_name and hints."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from conduit_mcp.client import DEFAULT_HINTS, Error, Hints, InputRequired, Tool, ToolResult

SCHEMA = {"type": "object"}


def tool(**fields: object) -> Tool:
    raw = {"name": "get_weather", "inputSchema": {"type": "object"}, **fields}
    return Tool.from_wire("srv", raw)


# -- from_wire: shape ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "path", "got"),
    [
        pytest.param({"inputSchema": SCHEMA}, ("name",), "missing", id="name-missing"),
        pytest.param({"name": 7, "inputSchema": SCHEMA}, ("name",), "integer", id="name-int"),
        pytest.param({"name": None, "inputSchema": SCHEMA}, ("name",), "null", id="name-null"),
        pytest.param({"name": ["a"], "inputSchema": SCHEMA}, ("name",), "array", id="name-list"),
        pytest.param({"name": "a"}, ("inputSchema",), "missing", id="schema-missing"),
        pytest.param(
            {"name": "a", "inputSchema": None}, ("inputSchema",), "null", id="schema-null"
        ),
        pytest.param({"name": "a", "inputSchema": []}, ("inputSchema",), "array", id="schema-list"),
        pytest.param(
            {"name": "a", "inputSchema": True}, ("inputSchema",), "boolean", id="schema-bool"
        ),
        pytest.param(
            {"name": "a", "inputSchema": "{}"}, ("inputSchema",), "string", id="schema-string"
        ),
    ],
)
def test_from_wire_rejects_wrong_shape_with_path(
    raw: dict[str, object], path: tuple, got: str
) -> None:
    """Spec-mandated (2026-07-28 schema `Tool`: `name` string and `inputSchema` object, both
    required)."""
    with pytest.raises(Error) as info:
        Tool.from_wire("srv", raw)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_tool", path)
    assert err.details["got"] == got


@pytest.mark.parametrize("raw", [None, [], "tool", 3, 2.5, True], ids=repr)
def test_from_wire_rejects_a_non_object_at_the_root(raw: object) -> None:
    """Spec-mandated (schema `Tool` is an object)."""
    with pytest.raises(Error) as info:
        Tool.from_wire("srv", raw)
    assert (info.value.reason, info.value.path) == ("invalid_tool", ())


def test_from_wire_checks_shape_only_not_name_rules() -> None:
    """conduit-defined: name charset and x-mcp-header rules are tool intake's, not from_wire's."""
    raw = {
        "name": "has spaces and ünïcode" * 20,
        "inputSchema": {"type": "object", "properties": {"a": {"x-mcp-header": ""}}},
    }
    assert Tool.from_wire("srv", raw).name == raw["name"]


@pytest.mark.parametrize("server_id", [None, 1, b"srv"])
def test_from_wire_raises_type_error_for_a_non_string_server_id(server_id: object) -> None:
    """conduit-defined: a bad server_id is the caller's bug, not a protocol error."""
    with pytest.raises(TypeError):
        Tool.from_wire(server_id, {"name": "a", "inputSchema": {}})  # type: ignore[arg-type]


def test_from_wire_raises_value_error_for_an_empty_server_id() -> None:
    """conduit-defined."""
    with pytest.raises(ValueError):
        Tool.from_wire("", {"name": "a", "inputSchema": {}})


def test_from_wire_does_not_copy_raw_unless_asked() -> None:
    """conduit-defined: the caller hands the object over; copy=True is the opt-in."""
    raw = {"name": "a", "inputSchema": {"type": "object"}}
    assert Tool.from_wire("srv", raw).raw is raw
    copied = Tool.from_wire("srv", raw, copy=True)
    assert copied.raw == raw and copied.raw is not raw
    assert copied.raw["inputSchema"] is not raw["inputSchema"]


def test_from_wire_and_every_accessor_leave_raw_untouched() -> None:
    """conduit-defined: nothing in this library mutates raw (inputs that would show a change)."""
    raw = {
        "name": "a",
        "title": None,
        "description": 5,
        "inputSchema": {"type": ["object", "null"], "properties": None},
        "outputSchema": [],
        "annotations": {"title": "", "readOnlyHint": "yes", "destructiveHint": None},
        "execution": "x",
        "_meta": None,
        "icons": [{"src": "data:,"}],
        "x-unknown": {"nested": [1, 2.5, None]},
    }
    before = copy.deepcopy(raw)
    t = Tool.from_wire("srv", raw)
    for attr in (
        "name",
        "title",
        "description",
        "input_schema",
        "output_schema",
        "annotations",
        "execution",
        "meta",
        "display_name",
    ):
        getattr(t, attr)
    t.hints(trusted=True)
    t.hints(trusted=False)
    assert raw == before


# -- lifted fields --------------------------------------------------------------------------------


def test_lifted_fields_read_what_raw_holds() -> None:
    """Spec-mandated (2026-07-28 schema `Tool` properties)."""
    annotations = {"title": "Weather", "readOnlyHint": True}
    execution = {"taskSupport": "optional"}
    meta = {"com.example/x": 1}
    t = tool(
        title="Get weather",
        description="Current weather",
        outputSchema={"type": "object"},
        annotations=annotations,
        execution=execution,
        _meta=meta,
    )
    assert t.name == "get_weather"
    assert t.title == "Get weather"
    assert t.description == "Current weather"
    assert t.input_schema == {"type": "object"}
    assert t.output_schema == {"type": "object"}
    assert t.annotations is annotations
    assert t.execution is execution
    assert t.meta is meta
    assert t.server_id == "srv"
    assert t.fingerprint is None


def test_absent_optional_fields_read_as_none_and_meta_as_empty() -> None:
    """Spec-mandated (schema `Tool`: only name and inputSchema are required)."""
    t = tool()
    assert (t.title, t.description, t.output_schema, t.annotations, t.execution) == (None,) * 5
    assert t.meta == {}


@pytest.mark.parametrize(
    ("key", "value", "attr", "expected"),
    [
        ("title", 3, "title", None),
        ("title", ["x"], "title", None),
        ("description", {"text": "x"}, "description", None),
        ("outputSchema", "object", "output_schema", None),
        ("outputSchema", True, "output_schema", None),
        ("annotations", [], "annotations", None),
        ("execution", "optional", "execution", None),
        ("_meta", [1], "meta", {}),
        ("_meta", None, "meta", {}),
    ],
)
def test_a_lifted_field_of_the_wrong_json_type_reads_as_none_and_raw_keeps_it(
    key: str, value: object, attr: str, expected: object
) -> None:
    """conduit-defined (lenient intake of sloppy servers): raw keeps what was sent."""
    t = tool(**{key: value})
    assert getattr(t, attr) == expected
    assert t.raw[key] == value


def test_unknown_keys_stay_in_raw() -> None:
    """Spec-mandated (schemas allow additional properties on Tool)."""
    t = tool(icons=[{"src": "https://example.com/i.png"}], futureField={"a": 1})
    assert t.raw["icons"] == [{"src": "https://example.com/i.png"}]
    assert t.raw["futureField"] == {"a": 1}


def test_fingerprint_is_attached_or_set_on_a_copy() -> None:
    """conduit-defined: fingerprint is None until the caller sets it; Tool stays immutable."""
    t = Tool.from_wire("srv", {"name": "a", "inputSchema": {}}, fingerprint="jcs-sha256:00")
    assert t.fingerprint == "jcs-sha256:00"
    u = tool()
    v = u.with_fingerprint("jcs-sha256:ff")
    assert (u.fingerprint, v.fingerprint) == (None, "jcs-sha256:ff")
    assert v.raw is u.raw


def test_tool_is_immutable() -> None:
    """conduit-defined."""
    t = tool()
    with pytest.raises(AttributeError):
        t.server_id = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        t.fingerprint = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del t.raw


def test_tools_compare_by_server_raw_and_fingerprint() -> None:
    """conduit-defined."""
    assert tool() == tool()
    assert tool() != Tool.from_wire(
        "other", {"name": "get_weather", "inputSchema": {"type": "object"}}
    )
    assert tool() != tool().with_fingerprint("x")


# -- display_name ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"title": "T", "annotations": {"title": "A"}}, "T", id="title-wins"),
        pytest.param({"annotations": {"title": "A"}}, "A", id="annotations-title"),
        pytest.param({}, "get_weather", id="name"),
        pytest.param({"title": "", "annotations": {"title": "A"}}, "A", id="empty-title-skipped"),
        pytest.param({"title": None, "annotations": {"title": ""}}, "get_weather", id="both-empty"),
        pytest.param({"title": 5, "annotations": {"title": 6}}, "get_weather", id="non-strings"),
        pytest.param({"annotations": "A"}, "get_weather", id="annotations-not-object"),
    ],
)
def test_display_name_follows_the_spec_precedence(fields: dict[str, object], expected: str) -> None:
    """Spec-mandated (2026-07-28 schema `Tool.annotations`: "Display name precedence order is:
    `title`, `annotations.title`, then `name`"); a candidate that is not a non-empty string is
    skipped (conduit-defined)."""
    assert tool(**fields).display_name == expected


def test_display_name_falls_back_to_an_empty_name() -> None:
    """conduit-defined: the name is the last resort even when empty."""
    assert Tool.from_wire("srv", {"name": "", "inputSchema": {}}).display_name == ""


# -- hints ----------------------------------------------------------------------------------------

ALL_TRUE_OPPOSITE = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def test_untrusted_hints_are_the_spec_defaults_whatever_the_server_says() -> None:
    """Spec-mandated (schema `ToolAnnotations`: clients should never decide on hints from
    untrusted servers; defaults readOnly false, destructive true, idempotent false,
    openWorld true)."""
    expected = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)
    assert DEFAULT_HINTS == expected
    assert tool(annotations=ALL_TRUE_OPPOSITE).hints(trusted=False) == expected


def test_trusted_hints_take_the_servers_booleans() -> None:
    """Spec-mandated (schema `ToolAnnotations`)."""
    assert tool(annotations=ALL_TRUE_OPPOSITE).hints(trusted=True) == Hints(
        True, False, True, False
    )


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, None, [], {}])
def test_trusted_hints_ignore_values_that_are_not_json_booleans(value: object) -> None:
    """conduit-defined: `"yes"`, `1` and `null` are not booleans; the default stands."""
    annotations = dict.fromkeys(ALL_TRUE_OPPOSITE, value)
    hints = tool(annotations=annotations).hints(trusted=True)
    assert hints == DEFAULT_HINTS
    assert all(type(h) is bool for h in hints)


def test_error_survives_pickling_with_its_fields() -> None:
    """conduit-defined: errors cross process boundaries (worker pools) intact."""
    with pytest.raises(Error) as info:
        Tool.from_wire("srv", {"name": 1, "inputSchema": {}})
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.kind, again.reason, again.path, again.details) == (
        "protocol",
        "invalid_tool",
        ("name",),
        {"expected": "a string", "got": "integer"},
    )


def test_the_wire_values_are_frozen_slotted_dataclasses_that_do_not_hash() -> None:
    """conduit-defined (issue 15 item 6): one idiom for immutable values. Assigning or deleting
    a field raises `FrozenInstanceError`, adding an attribute fails; the values hold dicts, so
    they are not hashable."""
    values = [
        tool(),
        ToolResult.from_wire({"content": []}),
        InputRequired.from_wire({"resultType": "input_required", "requestState": "s"}),
    ]
    for value in values:
        assert dataclasses.is_dataclass(value) and not hasattr(value, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.raw = {}  # type: ignore[misc]
        # A name that is not a field: TypeError on CPython before the gh-105936 fix (slotted
        # frozen dataclasses call super() with the pre-slots class), FrozenInstanceError after.
        with pytest.raises((dataclasses.FrozenInstanceError, TypeError)):
            value.other = 1  # type: ignore[attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del value.raw
        with pytest.raises(TypeError):
            hash(value)
