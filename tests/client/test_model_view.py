"""`iter_model_text`: the one definition of which strings of a tool a model reads."""

from __future__ import annotations

import copy
from typing import Any

from conduit_mcp.client._model_view import iter_model_text


def pairs(tool: Any) -> list[tuple[tuple[Any, ...], str, bool]]:
    return [(item.path, item.text, item.is_key) for item in iter_model_text(tool)]


TOOL: dict[str, Any] = {
    "name": "read_note",
    "title": "Read a note",
    "description": "Read one note by id.",
    "annotations": {"title": "Note reader", "readOnlyHint": True},
    "icons": [{"src": "https://example.invalid/i.png"}],
    "_meta": {"description": "not shown to a model"},
    "inputSchema": {
        "type": "object",
        "title": "Args",
        "properties": {
            "id": {"type": "string", "description": "The note id.", "examples": ["n-1"]},
            "mode": {"enum": ["fast", 3, None], "default": "fast"},
            "filter": {
                "type": "object",
                "properties": {"tag": {"const": "x", "description": "Tag."}},
                "default": {"tag": "x", "deep": [{"k": "v"}]},
            },
        },
        "$defs": {"Ref": {"description": "A reference.", "pattern": "^r"}},
        "anyOf": [{"title": "One"}],
        "required": ["id"],
    },
    "outputSchema": {"type": "object", "properties": {"text": {"title": "Text"}}},
}

#: Worked out by hand from the definition in `_model_view`'s docstring (issue 10, item 1).
EXPECTED = [
    (("name",), "read_note", False),
    (("title",), "Read a note", False),
    (("description",), "Read one note by id.", False),
    (("annotations", "title"), "Note reader", False),
    (("inputSchema", "title"), "Args", False),
    (("inputSchema", "properties", "id"), "id", True),
    (("inputSchema", "properties", "mode"), "mode", True),
    (("inputSchema", "properties", "filter"), "filter", True),
    (("inputSchema", "properties", "id", "description"), "The note id.", False),
    (("inputSchema", "properties", "id", "examples", 0), "n-1", False),
    (("inputSchema", "properties", "mode", "enum", 0), "fast", False),
    (("inputSchema", "properties", "mode", "default"), "fast", False),
    (("inputSchema", "properties", "filter", "properties", "tag"), "tag", True),
    (("inputSchema", "properties", "filter", "properties", "tag", "const"), "x", False),
    (("inputSchema", "properties", "filter", "properties", "tag", "description"), "Tag.", False),
    (("inputSchema", "properties", "filter", "default", "tag"), "x", False),
    (("inputSchema", "properties", "filter", "default", "deep", 0, "k"), "v", False),
    (("inputSchema", "$defs", "Ref", "description"), "A reference.", False),
    (("inputSchema", "anyOf", 0, "title"), "One", False),
    (("outputSchema", "properties", "text"), "text", True),
    (("outputSchema", "properties", "text", "title"), "Text", False),
]


def test_every_string_a_model_reads_is_yielded_with_its_exact_path() -> None:
    """conduit-defined (issue 10 item 1): name, title, description, annotations.title; in the
    schemas every title/description, property names, strings of enum/const/default/examples.
    Not `_meta`, icons, `$defs` names, `pattern`, `type`, `required`."""
    assert sorted(pairs(TOOL)) == sorted(EXPECTED)


def test_the_walk_does_not_mutate_or_copy_the_tool() -> None:
    """conduit-defined: the strings are the tool's own objects; the tool is unchanged."""
    before = copy.deepcopy(TOOL)
    items = list(iter_model_text(TOOL))
    assert TOOL == before
    description = next(i for i in items if i.path == ("description",))
    assert description.text is TOOL["description"]


def test_members_of_the_wrong_type_are_skipped() -> None:
    """conduit-defined: the walk never raises on a malformed tool."""
    tool = {
        "name": 5,
        "description": None,
        "annotations": ["title"],
        "inputSchema": {"properties": ["a"], "description": 7, "enum": "s", "items": True},
    }
    assert pairs(tool) == [(("inputSchema", "enum"), "s", False)]
    assert pairs("not a tool") == []


def test_ten_thousand_levels_are_walked_without_recursion() -> None:
    """conduit-defined (docs/errors.md, Guarantees: no recursion limit): nested `properties` and
    `default` values of any depth."""
    depth = 10_000
    schema: dict[str, Any] = {"description": "leaf"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"p": schema}}
    data: Any = "deep"
    for _ in range(depth):
        data = [data]
    tool = {"name": "t", "inputSchema": schema, "outputSchema": {"default": data}}
    items = list(iter_model_text(tool))
    assert len(items) == 1 + depth + 1 + 1
    leaf = next(i for i in items if i.text == "leaf")
    assert leaf.path == ("inputSchema", *(("properties", "p") * depth), "description")
    deep = next(i for i in items if i.text == "deep")
    assert deep.path == ("outputSchema", "default", *([0] * depth))


def test_plain_false_yields_exactly_the_strings_with_hidden_characters() -> None:
    """conduit-defined: the scan mode skips clean strings and clean schemas, whatever their
    script, and a literal backslash-b in a pattern is not mistaken for a backspace."""
    tool = {
        "name": "t",
        "description": "Line one\nline two — café, 漢字",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"description": "ok — ü", "pattern": "\\bword\\b"},
                "b": {"description": "bad\u200b", "enum": ["x\x1b[1m", "y"]},
            },
        },
        "outputSchema": {"type": "object", "description": "fine ✓"},
    }
    assert pairs_hidden(tool) == [
        (("inputSchema", "properties", "b", "description"), "bad\u200b", False),
        (("inputSchema", "properties", "b", "enum", 0), "x\x1b[1m", False),
    ]


def pairs_hidden(tool: Any) -> list[tuple[tuple[Any, ...], str, bool]]:
    return [(item.path, item.text, item.is_key) for item in iter_model_text(tool, plain=False)]
