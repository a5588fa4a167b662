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


# -- the guard applies the table, version by version ----------------------------------------

HIDDEN = "".join(chr(0xE0000 + ord(c)) for c in "obey") + "\u200b\u202e\x1b[8m"


def _build(path: tuple[str, ...], leaf: Any, mapped: bool = False) -> Any:
    """The smallest JSON value with `leaf` at `path` (`*` one element, or one member `field`
    of a map such as `properties`; `~` one key)."""
    if not path:
        return leaf
    step, rest = path[0], path[1:]
    if step == "*":
        inner = _build(rest, leaf)
        return {"field": inner} if mapped else [inner]
    if step == "~":
        return {leaf: {}}
    return {step: _build(rest, leaf, mapped=step == "properties")}


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _concrete(path: tuple[str, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for index, step in enumerate(path):
        mapped = index > 0 and path[index - 1] == "properties"
        out.append(("field" if mapped else 0) if step == "*" else step)
    return tuple(out)


RUNS = [
    (read, member, version)
    for read in READS
    for member in read.members
    for version in VERSIONS
    if VERSIONS.index(max(read.since, member.since, key=VERSIONS.index)) <= VERSIONS.index(version)
    and all(
        u is None or VERSIONS.index(version) <= VERSIONS.index(u)
        for u in (read.until, member.until)
    )
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("read", "member", "version"),
    RUNS,
    ids=[f"{r.method}:{'/'.join(m.path) or '.'}@{v}" for r, m, v in RUNS],
)
async def test_hidden_text_in_each_member_is_cleaned_or_its_item_withheld(
    read: Read, member: Member, version: str
) -> None:
    """conduit-defined (issue 30 item 1), per revision that has the member: hidden text in it
    is removed, and the message's `_meta` names the place; in an identifier the item is left
    out (or the whole refused), the text never rewritten."""
    from conduit_mcp.guard import RESULT_META_KEY, Guard

    guard = Guard("s")
    engine = guard.engine()
    stamp = {"_meta": {"io.modelcontextprotocol/protocolVersion": version}}
    if version < "2026-07-28":
        await engine.outbound({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        await engine.inbound({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version}})
        stamp = {}
    leaf = "x" + HIDDEN
    value = _build(member.path, leaf)
    part = _build((*read.items, "*"), value) if read.items is not None else value
    if read.items is None and not isinstance(part, dict):
        pytest.fail("a whole is an object")
    where = (*(read.items or ()), *(("*",) if read.items is not None else ()), *member.path)
    where = _concrete(where)
    if read.kind == "response":
        await engine.outbound({"jsonrpc": "2.0", "id": 1, "method": read.method, "params": stamp})
        verdict = await engine.inbound({"jsonrpc": "2.0", "id": 1, "result": part})
        out = verdict.message["result"] if verdict.action == "replace" else part  # type: ignore[index]
    else:
        message = {"jsonrpc": "2.0", "method": read.method, "params": part}
        if read.kind == "request":
            message["id"] = 1
        verdict = await engine.inbound(message)
        out = verdict.message["params"] if verdict.action == "replace" else None  # type: ignore[index]
    if member.identifier:
        if read.items is not None:
            assert _at(out, _concrete(read.items)) == []
            assert out["_meta"][RESULT_META_KEY]["withheld"] == [f"$.{'.'.join(read.items)}[0]"]
        else:
            assert verdict.action == "drop"
        assert any(e.reason == "hidden_characters_in_name" for e in guard.events)
        return
    assert verdict.action == "replace"
    assert _at(out, where) == "x"
    said = out["_meta"][RESULT_META_KEY]["text_cleaned"]
    assert any(p.startswith("$") for p in said)
