"""Property tests: `intake` and `intake_json` on any page, mutated real pages, valid pages."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import (
    REASONS,
    WARNING_CODES,
    Error,
    Intake,
    fingerprint,
    intake,
    intake_json,
)
from tests.property.checks import is_json_text_value
from tests.property.profiles import bounded
from tests.property.strategies import (
    VERSIONS,
    json_values,
    real_or_mutated,
    real_pages,
    real_tools,
    versioned_instances,
)

SERVER = "prop-server"
TRANSPORTS = ("stdio", "streamable-http")


@st.composite
def pages(draw: st.DrawFn, *, wire: bool) -> Any:
    """A real page, a page of real or mutated tools, or any JSON value, mutated or not."""
    tools = st.lists(real_or_mutated(real_tools(), wire=wire), max_size=4)
    return draw(
        st.one_of(
            real_or_mutated(real_pages(), wire=wire),
            st.builds(lambda t: {"tools": t}, tools),
            st.builds(lambda t: {"tools": t + t}, tools),  # every name twice
            json_values(wire=wire),
        )
    )


def _check_intake(got: Intake, page: dict[str, Any]) -> None:
    tools = page["tools"]
    rejected = {r.index: r for r in got.rejected}
    accepted = [i for i in range(len(tools)) if i not in rejected]
    assert len(got.tools) + len(got.rejected) == len(tools)
    assert [r.index for r in got.rejected] == sorted(rejected)
    names = [t.name for t in got.tools]
    assert len(set(names)) == len(names)  # duplicate names: first wins
    for index, tool in zip(accepted, got.tools, strict=True):
        assert tool.raw is tools[index]
        assert tool.server_id == SERVER
        assert tool.fingerprint == fingerprint(tool.raw)
    for rejection in got.rejected:
        assert rejection.reason in REASONS
        assert rejection.path[:2] == ("tools", rejection.index)
    for warning in got.warnings:
        assert warning.code in WARNING_CODES
        assert warning.path[:1] == ("tools",) and 0 <= warning.path[1] < len(tools)
    for index in range(len(tools)):  # the binary search finds exactly the linear filter's run
        expected = tuple(x for x in got.warnings if x.path[:2] == ("tools", index))
        assert got.warnings_for(index) == expected
    assert (got.next_cursor, got.ttl_ms) == (page.get("nextCursor"), page.get("ttlMs"))


@bounded(50)
@given(
    page=pages(wire=False), transport=st.sampled_from(TRANSPORTS), version=st.sampled_from(VERSIONS)
)
def test_intake_raises_only_invalid_tools_list_and_accounts_for_every_tool(
    page: Any, transport: Any, version: str
) -> None:
    """Spec-mandated (2026-07-28 server/tools "Listing Tools"; basic/transports "Custom Headers
    from Tool Parameters": exclude a bad tool, keep the rest): only a page that is not an
    object with a `tools` array raises (`invalid_tools_list`); otherwise every tool is accepted
    (with its fingerprint, `raw` the very object) or rejected with a known reason and a path,
    names are unique, the outcome is deterministic and nothing is mutated."""
    before = repr(page)
    try:
        got = intake(SERVER, page, transport=transport, protocol_version=version)
    except Error as exc:
        assert (exc.kind, exc.reason) == ("protocol", "invalid_tools_list")
        assert not (isinstance(page, dict) and isinstance(page.get("tools"), list))
    else:
        _check_intake(got, page)
        assert intake(SERVER, page, transport=transport, protocol_version=version) == got
    assert repr(page) == before


@bounded(30)
@given(page=pages(wire=True), transport=st.sampled_from(TRANSPORTS))
def test_intake_json_equals_intake_of_the_parsed_page(page: Any, transport: Any) -> None:
    """conduit-defined (intake_json: "`intake` from the JSON text"): the bytes of a page, bare
    or wrapped in a JSON-RPC response, give the same `Intake` as the page itself."""
    if not is_json_text_value(page):
        return
    text = json.dumps(page)
    wrapped = json.dumps({"jsonrpc": "2.0", "id": 1, "result": page})
    try:
        expected: Any = intake(
            SERVER, json.loads(text), transport=transport, protocol_version="2026-07-28"
        )
    except Error as exc:
        expected = (exc.kind, exc.reason, exc.path)
    for data in (text.encode(), wrapped.encode()):
        try:
            got: Any = intake_json(SERVER, data, transport=transport, protocol_version="2026-07-28")
        except Error as exc:
            got = (exc.kind, exc.reason, exc.path)
        assert got == expected


@bounded(20)
@given(versioned_instances("ListToolsResult"))
def test_every_schema_valid_page_is_accepted_whole_on_stdio(case: tuple[str, Any]) -> None:
    """Spec-mandated (each version's schema.json "ListToolsResult"; server/tools "Tool Names":
    names SHOULD be unique, so later duplicates are rejected): on stdio every tool of a
    schema-valid page is accepted except a repeated name."""
    version, page = case
    got = intake(SERVER, page, transport="stdio", protocol_version=version)
    first: dict[str, int] = {}
    for index, tool in enumerate(page["tools"]):
        first.setdefault(tool["name"], index)
    assert [t.raw for t in got.tools] == [page["tools"][i] for i in sorted(first.values())]
    assert {r.reason for r in got.rejected} <= {"duplicate_tool_name"}


@pytest.mark.parametrize("data", [b"", b"[", b"null", b'{"tools": {}}', b"\xff"])
def test_intake_json_refuses_broken_bytes_with_an_error(data: bytes) -> None:
    """conduit-defined: broken bytes never raise anything but `Error`."""
    with pytest.raises(Error):
        intake_json(SERVER, data, transport="stdio", protocol_version="2026-07-28")
