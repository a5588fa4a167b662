"""The round-3 handed cases (tests/fixtures/cases/round3, provenance in its README): each
`expect`, asserted through the real `mcp.ClientSession` with the guard on a scripted server
(kind `guard`) or through `intake` and the guard (kind `page`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import mcp_types
import pytest
from mcp.client.extension import ResultClaim
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from conduit_mcp.client import intake
from conduit_mcp.guard import Guard

from .scripted import scripted_session

pytestmark = pytest.mark.anyio

ROUND3 = Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "round3"
TASKS = "io.modelcontextprotocol/tasks"


def _case(prefix: str) -> dict[str, Any]:
    (path,) = ROUND3.glob(f"{prefix}-*.json")
    case: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return case


def _server(case: dict[str, Any]) -> Any:
    """A handler answering each method with the case's listed results in order."""
    queues = {method: list(results) for method, results in case["input"]["server"].items()}

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = queues[method].pop(0)
        return result

    return handler


@pytest.mark.parametrize("page", [{}, {"tools": None}], ids=["no-tools-member", "tools-null"])
async def test_case_55_an_unreadable_listing_is_the_sdks_json_rpc_error(
    page: dict[str, Any],
) -> None:
    """Case 55 (and its sibling `tools: null`): never a pydantic ValidationError out of
    list_tools; MCPError -32603, reason invalid_tools_list, event list_unreadable."""
    case = _case("55")
    case["input"]["server"]["tools/list"] = [page]
    guard = Guard("case-server", **case["input"]["policy"])
    version = case["input"]["protocol_version"]
    async with scripted_session(guard, _server(case), version=version) as (session, _):
        try:
            await session.list_tools()
        except ValidationError:  # pragma: no cover - the failure this case is about
            pytest.fail("a raw pydantic error reached the caller")
        except MCPError as exc:
            error = exc.error
        else:  # pragma: no cover
            pytest.fail("an unreadable listing passed as a listing")
    assert error.code == -32603
    assert error.data["reason"] == "invalid_tools_list"
    assert [(e.kind, e.reason) for e in guard.events] == [("list_unreadable", "invalid_tools_list")]


class TaskResult(mcp_types.Result):
    """The tasks extension's `CreateTaskResult` as a client claims it (2026-07-28)."""

    result_type: Literal["task"] = "task"
    task: dict[str, Any]


async def _resolve(result: TaskResult, ctx: Any) -> mcp_types.CallToolResult:
    text = f"task {result.task['taskId']} {result.task['status']}"
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])


def _tasks_client() -> dict[str, Any]:
    claim = ResultClaim(result_type="task", model=TaskResult, resolve=_resolve)
    return {"extensions": {TASKS: {}}, "result_claims": {TASKS: [claim]}}


async def test_case_57_a_task_handle_reaches_a_client_that_advertised_tasks() -> None:
    """Case 57: the client advertised the tasks extension, so `resultType: "task"` is a valid
    result type (2026-07-28 basic "ResultType"): the guard hands it to the SDK, whose claim
    parses it; the task id is not lost. (`allow_claimed=True`: ClientSession returns the
    claimed model; `mcp.Client(extensions=...)` would run the resolver.)"""
    case = _case("57")
    assert case["input"]["client"]["tasks_extension"] is True
    guard = Guard("case-server", **case["input"]["policy"])
    version = case["input"]["protocol_version"]
    step = case["input"]["steps"][1]
    async with scripted_session(guard, _server(case), version=version, **_tasks_client()) as (
        session,
        script,
    ):
        await session.list_tools()
        result = await session.call_tool(step["name"], step["arguments"], allow_claimed=True)
    assert isinstance(result, TaskResult)
    assert result.task["taskId"] == "task-51"
    assert script.calls() == [("build_archive", {})]
    assert [e.kind for e in guard.events] == ["tool_new"]


@pytest.mark.parametrize(
    ("result_type", "advertise"),
    [("mystery", True), ("task", False)],
    ids=["unknown-type-with-tasks", "task-without-tasks"],
)
async def test_case_57_other_result_types_stay_invalid(result_type: str, advertise: bool) -> None:
    """Sibling of case 57: a type no advertised extension adds is still invalid (-32603,
    invalid_result_type): "any value unrecognized by the client MUST be considered invalid"."""
    case = _case("57")
    case["input"]["server"]["tools/call"][0]["resultType"] = result_type
    guard = Guard("case-server")
    kwargs = _tasks_client() if advertise else {}
    async with scripted_session(guard, _server(case), version="2026-07-28", **kwargs) as (
        session,
        _,
    ):
        await session.list_tools()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("build_archive", {}, allow_claimed=True)
    assert refused.value.error.code == -32603
    assert refused.value.error.data["reason"] == "invalid_result_type"


def test_case_60_unsafe_icon_sources_are_warned_at_intake() -> None:
    """Case 60: the tool is accepted; one `icon_unsafe_uri` warning per unsafe src (icons 0
    javascript:, 1 file:, 2 relative); the https and data:image/png icons draw none."""
    case = _case("60")
    page = intake("srv", case["input"], transport="stdio", protocol_version="2026-07-28")
    assert [t.name for t in page.tools] == ["open_doc"]
    assert [(w.code, w.path) for w in page.warnings] == [
        ("icon_unsafe_uri", ("tools", 0, "icons", i, "src")) for i in (0, 1, 2)
    ]


async def test_case_60_unsafe_icons_are_removed_from_what_the_sdk_sees() -> None:
    """Case 60 through the guard: the SDK's Tool.icons holds only the https and data: icons;
    one `icon_removed` event per unsafe icon; the server's dict is not changed."""
    case = _case("60")
    page = case["input"]
    before = json.dumps(page)
    guard = Guard("case-server")
    async with scripted_session(guard, lambda m, p: page) as (session, _):
        listed = await session.list_tools()
    (tool,) = listed.tools
    assert [icon.src for icon in tool.icons or []] == [
        "https://docs.example/doc.png",
        "data:image/png;base64,iVBORw0KGgo=",
    ]
    removed = [e for e in guard.events if e.kind == "icon_removed"]
    assert [(e.tool, e.json_path) for e in removed] == [
        ("open_doc", f"$.tools[0].icons[{i}].src") for i in (0, 1, 2)
    ]
    assert json.dumps(page) == before
