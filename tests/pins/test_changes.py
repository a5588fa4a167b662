"""field_changes: RFC 6901 paths, RFC 6902 operation names, material vs cosmetic.

The property test applies the changes to the old value with a small RFC 6902 applier written
here (independent of the code under test) and expects the new value.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from conduit_mcp.client import Tool
from conduit_mcp.pins import DEFAULT_COSMETIC, diff_tools
from conduit_mcp.pins._changes import field_changes, normalized
from tests.property.profiles import bounded
from tests.property.strategies import json_objects, json_values


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")  # RFC 6901 section 4, in this order


def apply(doc: Any, changes: Any) -> Any:
    """RFC 6902 add/remove/replace at each path, in the order given (removals from the end)."""
    root = {"": copy.deepcopy(doc)}
    ordered = [c for c in changes if c.op != "remove"] + sorted(
        (c for c in changes if c.op == "remove"),
        key=lambda c: [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in c.path.split("/")],
        reverse=True,
    )
    for change in ordered:
        tokens = [_unescape(t) for t in change.path.split("/")[1:]] if change.path else []
        parent: Any = root
        key: Any = ""
        for token in tokens:
            parent = parent[key]
            key = int(token) if isinstance(parent, list) else token
        if change.op == "remove":
            del parent[key]
        elif change.op == "add" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(change.new))
        else:
            parent[key] = copy.deepcopy(change.new)
    return root[""]


def test_default_cosmetic_pointers_are_the_issue_list() -> None:
    assert DEFAULT_COSMETIC == {"/title", "/icons", "/annotations/title"}


def test_equal_values_have_no_changes() -> None:
    assert field_changes({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}) == ()


def test_a_type_change_is_one_replace() -> None:
    (change,) = field_changes({"a": {"b": 1}}, {"a": [1]})
    assert (change.path, change.op, change.old, change.new) == ("/a", "replace", {"b": 1}, [1])


def test_icons_changes_below_the_pointer_are_cosmetic() -> None:
    old = {"icons": [{"src": "a"}], "name": "n"}
    new = {"icons": [{"src": "b"}, {"src": "c"}], "name": "n"}
    assert [(c.path, c.material) for c in field_changes(old, new)] == [
        ("/icons/0/src", False),
        ("/icons/1", False),
    ]


def test_an_empty_cosmetic_set_makes_everything_material() -> None:
    assert [c.material for c in field_changes({"title": "a"}, {"title": "b"}, ())] == [True]


def test_removing_annotations_that_held_only_a_title_is_cosmetic() -> None:
    changes = field_changes({"annotations": {"title": "T"}}, {})
    assert [(c.path, c.op, c.material) for c in changes] == [("/annotations", "remove", False)]
    changes = field_changes({}, {"annotations": {"title": "T", "readOnlyHint": True}})
    assert [(c.path, c.op, c.material) for c in changes] == [("/annotations", "add", True)]


def test_adding_an_empty_annotations_object_is_material() -> None:
    """Conservative: an empty object is not display text."""
    assert [(c.path, c.material) for c in field_changes({}, {"annotations": {}})] == [
        ("/annotations", True)
    ]


def test_normalized_reads_numbers_as_their_canonical_text_reads_back() -> None:
    """RFC 8785 3.2.2.3: 1.0 is written 1, -0.0 is written 0; beyond 2**53 integers are
    written `digits.0` by this library, which reads back as a double."""
    got = normalized({"a": [1.0, -0.0, 2**60, 0.5, True, (1,)]})
    assert got == {"a": [1, 0, float(2**60), 0.5, True, [1]]}
    assert [type(x) for x in got["a"]] == [int, int, float, float, bool, list]


def test_ten_thousand_levels_are_walked_without_recursion() -> None:
    old: Any = 0
    new: Any = 1
    for _ in range(10_000):
        old, new = {"a": old}, {"a": new}
    (change,) = field_changes(old, new)
    assert change.path == "/a" * 10_000 and (change.old, change.new) == (0, 1)


def test_diff_tools_explains_changed_tools_and_lists_material_ones() -> None:
    base = {"name": "a", "title": "A", "inputSchema": {"type": "object"}}
    other = {"name": "b", "description": "x", "inputSchema": {"type": "object"}}
    drift = diff_tools(
        [Tool.from_wire("s", base), Tool.from_wire("s", other)],
        [
            Tool.from_wire("s", {**base, "title": "A2"}),
            Tool.from_wire("s", {**other, "description": "y"}),
        ],
    )
    assert drift.changed == ("a", "b")
    assert drift.material == ("b",)
    assert [(c.path, c.material) for c in drift.changes["a"]] == [("/title", False)]
    assert [c.to_json() for c in drift.changes["b"]] == [
        {"path": "/description", "op": "replace", "material": True, "old": "x", "new": "y"}
    ]


def test_diff_tools_of_fingerprint_mappings_has_no_changes_and_counts_them_material() -> None:
    drift = diff_tools({"a": "jcs-sha256:" + "a" * 64}, {"a": "jcs-sha256:" + "b" * 64})
    assert drift.changes == {} and drift.material == ("a",)


@bounded(100)
@given(json_objects(), json_objects())
def test_applying_the_changes_to_the_old_value_gives_the_new_value(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    try:
        a, b = normalized(old), normalized(new)
    except OverflowError:  # an integer beyond a double: compared whole by the callers
        assume(False)
    changes = field_changes(a, b)
    assert (changes == ()) == (a == b and _same_types(a, b))
    assert normalized(apply(a, changes)) == b

    def order(path: str) -> list[tuple[int, int, str]]:
        # RFC 6901 array-index: ASCII digits (`"¹".isdigit()` is true, `int("¹")` raises).
        return [
            (0, int(t), "") if t.isascii() and t.isdigit() else (1, 0, t) for t in path.split("/")
        ]

    assert [c.path for c in changes] == sorted((c.path for c in changes), key=order)


def test_a_key_of_unicode_digits_is_a_key_not_an_array_index() -> None:
    """RFC 6901 section 4: an array index is ASCII digits; `"¹"` (a superscript one, for
    which `str.isdigit` is true and `int` raises) sorts as a key, in code point order."""
    changes = field_changes({}, {"¹": None, "a": [0, 1, 2]})
    assert [c.path for c in changes] == ["/a", "/¹"]
    changes = field_changes({"a": [0, 1]}, {"a": [0, 1, 2, 3]})
    assert [c.path for c in changes] == ["/a/2", "/a/3"]


@bounded(100)
@given(json_values(), st.sampled_from(["/title", "/icons", "/annotations/title"]))
def test_a_change_below_a_cosmetic_pointer_is_never_material(value: Any, pointer: str) -> None:
    new: dict[str, Any] = {}
    node = new
    tokens = pointer.split("/")[1:]
    for token in tokens[:-1]:
        node = node.setdefault(token, {})
    node[tokens[-1]] = value
    try:
        changes = field_changes({}, normalized(new))
    except OverflowError:  # an integer beyond a double: compared whole by the callers
        assume(False)
    assert changes and not any(c.material for c in changes)


def _same_types(a: Any, b: Any) -> bool:
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            stack.extend(zip(x, y, strict=True))
    return True


def test_a_property_named_with_a_non_ascii_digit_is_a_key_not_an_index() -> None:
    """Hypothesis found `{"¹": None}`: `"¹".isdigit()` is true but it is no array index (RFC 6901
    section 4 allows ASCII digits only), and sorting the changes must not raise."""
    old = {"name": "t", "inputSchema": {"type": "object", "properties": {}}}
    new = {"name": "t", "inputSchema": {"type": "object", "properties": {"¹": None, "2": None}}}
    changes = field_changes(old, new)
    assert [c.path for c in changes] == ["/inputSchema/properties/2", "/inputSchema/properties/¹"]
