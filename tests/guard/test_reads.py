"""The table of what a model reads outside tools (`conduit_mcp.guard._reads.READS`), checked
against the official schemas vendored in schema/ (Spec-mandated: each revision's
`schema.json`): every message kind and every member it names exists from its `since` to its
`until` revision and not in the revision before `since`; identifiers are what the client
sends back (a prompt's name in `prompts/get`, a resource's uri in `resources/read`, ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conduit_mcp_wire import VERSIONS

from conduit_mcp.guard._reads import FIRST, READS, Member, Read

SCHEMAS = Path(__file__).resolve().parents[2] / "schema"


def _defs(version: str) -> dict[str, Any]:
    schema = json.loads((SCHEMAS / version / "schema.json").read_text(encoding="utf-8"))
    found: dict[str, Any] = schema.get("definitions") or schema["$defs"]
    return found


def _nodes(defs: dict[str, Any], node: Any) -> list[dict[str, Any]]:
    """`node` with `$ref`s followed and `anyOf` / `oneOf` / `allOf` arms spread."""
    out: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        ref = item.get("$ref")
        if isinstance(ref, str):
            stack.append(defs[ref.rsplit("/", 1)[1]])
            continue
        arms = [a for key in ("anyOf", "oneOf", "allOf") for a in item.get(key, [])]
        if arms:
            stack.extend(arms)
        out.append(item)
    return out


def _walk(defs: dict[str, Any], start: Any, path: tuple[str, ...]) -> bool:
    """Whether `path` (keys, `*`, `~`) names something the schema allows below `start`."""
    here = _nodes(defs, start)
    for step in path:
        following: list[dict[str, Any]] = []
        for node in here:
            if step == "*":
                if node.get("type") == "array" and "items" in node:
                    following += _nodes(defs, node["items"])
                elif isinstance(node.get("additionalProperties"), dict):
                    following += _nodes(defs, node["additionalProperties"])
            elif step == "~":
                if isinstance(node.get("additionalProperties"), dict):
                    following.append(node)
            elif step in node.get("properties", {}):
                following += _nodes(defs, node["properties"][step])
        if not following:
            return False
        here = following
    return True


def _root(defs: dict[str, Any], read: Read) -> Any | None:
    definition = defs.get(read.definition)
    if definition is None:
        return None
    if read.part == "result":
        return definition
    params = [
        n["properties"]["params"]
        for n in _nodes(defs, definition)
        if "params" in n.get("properties", {})
    ]
    return params[0] if params else None


def _in(version: str, since: str, until: str | None) -> bool:
    order = VERSIONS.index
    return order(since) <= order(version) and (until is None or order(version) <= order(until))


CASES = [(read, member) for read in READS for member in read.members]


@pytest.mark.parametrize(
    ("read", "member"), CASES, ids=[f"{r.method}:{'/'.join(m.path) or '.'}" for r, m in CASES]
)
def test_each_member_is_in_the_schema_of_each_revision_that_has_it(
    read: Read, member: Member
) -> None:
    for version in VERSIONS:
        defs = _defs(version)
        root = _root(defs, read)
        has_message = _in(version, read.since, read.until)
        assert (root is not None) == has_message, (version, read.definition)
        if root is None:
            continue
        path = (*(read.items or ()), *member.path)
        if read.items is not None and not member.path:
            path = (*read.items, "*")
        elif read.items is not None:
            path = (*read.items, "*", *member.path)
        expected = _in(version, member.since, member.until)
        assert _walk(defs, root, path) == expected, (version, read.method, path)


def test_a_revision_before_since_lacks_the_member() -> None:
    """The `since` of each member is the first revision with it, not merely one that has it."""
    for read in READS:
        for member in read.members:
            start = max(VERSIONS.index(member.since), VERSIONS.index(read.since))
            if start == 0 or member.since == FIRST:
                continue
            defs = _defs(VERSIONS[start - 1])
            root = _root(defs, read)
            if root is None:
                continue
            path = (*(read.items or ()), "*", *member.path) if read.items else member.path
            assert not _walk(defs, root, path), (read.method, member.path)


def test_the_table_names_every_server_message_a_model_reads() -> None:
    """The rows: the answers that carry text to the model, and the server's own messages."""
    assert {r.method for r in READS} == {
        "initialize",
        "server/discover",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "elicitation/create",
        "sampling/createMessage",
        "notifications/message",
    }
    identifiers = {(r.method, m.path) for r in READS for m in r.members if m.identifier}
    assert identifiers == {
        ("prompts/list", ("name",)),
        ("prompts/list", ("arguments", "*", "name")),
        ("resources/list", ("uri",)),
        ("resources/templates/list", ("uriTemplate",)),
        ("elicitation/create", ("requestedSchema", "properties", "~")),
        ("elicitation/create", ("url",)),
        ("elicitation/create", ("elicitationId",)),
    }
