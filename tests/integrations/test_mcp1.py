"""mcp 1.x clients under the guard, each mcp release in its own venv under .cache/mcp1/ (built
on first use from the registry: mcp, langchain-mcp-adapters 0.3.2, which pins mcp >= 1.24, < 2,
and this project without its `mcp` extra, editable). No model, no network beyond the install.

- In process: mcp 1.x's own `ClientSession(*guard.wrap_streams(read, write))` over its own
  `stdio_client` (mcp1_guard_client.py, run in the venv) against the hostile raw JSON-RPC
  server of tests/guard, over Streamable HTTP (`guard.streamable_http_client`), and against
  server-everything (`guard.stdio_client`); what mcp 1.x's own models refuse never sinks a
  page; items that are no mcp 1.x JSON-RPC message are refused both ways.
- Through the proxy: langchain-mcp-adapters with `conduit-mcp proxy` (this venv's) as the
  server's command (mcp1_client.py).
- docs/integrations.md's mcp 1.x blocks, run as written in the venv.

Builds a venv: runs only when selected (`pytest -m mcp1`, `make test-mcp1`, or
CONDUIT_TEST_MCP1=1); the proxy test also needs a build that has `conduit-mcp proxy`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.filelocks import locked

from ..guard.conftest import HOSTILE, Hostile
from ..guard.conftest import server_everything_argv as server_everything_argv  # the fixture

pytestmark = pytest.mark.mcp1

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).resolve().parent / "mcp1_client.py"
GUARD_CLIENT = Path(__file__).resolve().parent / "mcp1_guard_client.py"
DOC = ROOT / "docs" / "integrations.md"
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
#: the floor langchain-mcp-adapters and mcp-use declare, and the last 1.x release.
MCP1_VERSIONS = ("1.24.0", "1.30.0")
ADAPTERS = "langchain-mcp-adapters==0.3.2"
#: what a venv holds besides mcp; a venv built from another recipe (or another pyproject.toml,
#: whose dependencies the editable install took) is rebuilt.
RECIPE = f"{ADAPTERS} -e {ROOT}"


@pytest.fixture
def selected(request: pytest.FixtureRequest) -> None:
    if "mcp1" not in request.config.getoption("markexpr") and not os.environ.get(
        "CONDUIT_TEST_MCP1"
    ):
        pytest.skip("builds its own venv: run with -m mcp1 (or CONDUIT_TEST_MCP1=1)")


@pytest.fixture
def proxy(selected: None) -> None:
    probe = subprocess.run([str(CONDUIT), "proxy", "--help"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("this build has no conduit-mcp proxy")


def mcp1_python(version: str) -> Path:
    """The python of a venv with mcp `version`, langchain-mcp-adapters and conduit-mcp (built
    once per recipe and pyproject.toml)."""
    venv = ROOT / ".cache" / "mcp1" / version
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    want = f"mcp=={version} {RECIPE} {pyproject}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with locked(venv.parent / f"{version}.lock", timeout=900):
        if not stamp.exists() or stamp.read_text() != want:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            subprocess.run([*pip, f"mcp=={version}", ADAPTERS, "-e", str(ROOT)], check=True)
            stamp.write_text(want)
    return python


def run_in(version: str, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    ran = subprocess.run(
        [str(mcp1_python(version)), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        **kwargs,
    )
    assert ran.returncode == 0, ran.stderr
    return ran


def guarded(version: str, scenario: str, *command: str) -> dict[str, Any]:
    """mcp1_guard_client.py's report for `scenario` against the server `command` runs."""
    report: dict[str, Any] = json.loads(
        run_in(version, [str(GUARD_CLIENT), scenario, *command]).stdout
    )
    assert report["mcp"] == version
    return report


def hostile_command(server: Hostile, version: str) -> list[str]:
    """The hostile server, run by the venv's python (it needs only the standard library)."""
    python = str(mcp1_python(version))
    return [python, str(HOSTILE), "--scenario", server.scenario, "--log", str(server.log)]


def events(report: dict[str, Any], kind: str) -> list[list[Any]]:
    """`[tool, reason, decision, json_path]` of the report's events of `kind`."""
    return [event[1:5] for event in report["events"] if event[0] == kind]


def refused(outcome: dict[str, Any], reason: str, tool: str, path: str) -> bool:
    data = {"source": "conduit-mcp.guard", "reason": reason, "tool": tool, "path": path}
    return outcome == {"error": -32602, "data": data}


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_mixed_page_keeps_its_good_tools_in_process(
    selected: None, version: str, hostile: Callable[[str], Hostile]
) -> None:
    """Spec 2025-11-25 schema `Tool` (name: string, inputSchema required), server/tools "Tool
    Names" (names SHOULD be unique): the tool named 42, the second echo and the tool without
    inputSchema are removed; without the guard mcp 1.x's `ListToolsResult` raises for the whole
    page. `stringly` (inputSchema `{"type": "string"}`) stays: intake only warns about the
    root type and mcp 1.x's `Tool` takes any inputSchema object (mcp 2.x's refuses it)."""
    server = hostile("mixed")
    report = guarded(version, "mixed", *hostile_command(server, version))
    assert report["listed"] == ["echo", "stringly", "add", "weather"]
    assert events(report, "tool_rejected") == [
        [None, "invalid_tool", "removed", "$.tools[3].name"],
        ["echo", "duplicate_tool_name", "removed", "$.tools[4].name"],
        ["noschema", "invalid_tool", "removed", "$.tools[5].inputSchema"],
    ]
    ok, bad_type, missing, not_object = report["calls"]
    assert ok == {"ok": ["hi"], "isError": False}
    assert refused(bad_type, "invalid_arguments", "echo", "$.arguments.message")
    assert refused(missing, "invalid_arguments", "add", "$.arguments")  # b is required
    assert refused(not_object, "invalid_arguments", "stringly", "$.arguments")
    assert server.calls() == [("echo", {"message": "hi"})]


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_mixed_page_over_streamable_http_in_process(
    selected: None, version: str, hostile_http: Callable[[str], tuple[str, Hostile]]
) -> None:
    """The same page and calls over Streamable HTTP, on `guard.streamable_http_client(url)`
    (mcp 1.x's `streamable_http_client`, whose third value, the session id getter, the guarded
    transport leaves out): the same verdicts as over stdio."""
    url, server = hostile_http("mixed")
    report = guarded(version, "http", url)
    assert report["listed"] == ["echo", "stringly", "add", "weather"]
    assert [e[0] for e in events(report, "tool_rejected")] == [None, "echo", "noschema"]
    ok, bad_type, missing, not_object = report["calls"]
    assert ok == {"ok": ["hi"], "isError": False}
    assert refused(bad_type, "invalid_arguments", "echo", "$.arguments.message")
    assert refused(missing, "invalid_arguments", "add", "$.arguments")
    assert refused(not_object, "invalid_arguments", "stringly", "$.arguments")
    assert server.calls() == [("echo", {"message": "hi"})]


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_rug_pull_blocked_and_invalid_arguments_refused_unsent_in_process(
    selected: None, version: str, hostile: Callable[[str], Hostile]
) -> None:
    """The second listing changes echo's description and inputSchema (no list_changed): echo
    is left out of the listing mcp 1.x sees and the echo the client still holds is refused
    (-32602, tool_blocked: the default `changed` policy); `add` with a string is refused, never
    sent."""
    server = hostile("rugpull")
    report = guarded(version, "rugpull", *hostile_command(server, version))
    assert (report["first"], report["second"]) == (["echo", "add"], ["add"])
    invalid, added, before, after = report["calls"]
    assert refused(invalid, "invalid_arguments", "add", "$.arguments.a")
    assert added == {"ok": ["3"], "isError": False}
    assert before == {"ok": ["before"], "isError": False}
    assert refused(after, "tool_blocked", "echo", "$.name")
    assert events(report, "tool_changed") == [
        ["echo", "tool_definition_changed", "blocked", "$.tools[0]"]
    ]
    assert server.calls() == [("add", {"a": 1, "b": 2}), ("echo", {"message": "before"})]


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_invalid_output_is_withheld_in_process(
    selected: None, version: str, hostile: Callable[[str], Hostile]
) -> None:
    """weather's outputSchema says temperature is a number; the server answers "hot". Spec
    2025-06-18 server/tools "Output Schema": clients SHOULD validate structured results. mcp
    1.x receives an isError result saying why (and so skips its own output check)."""
    server = hostile("output")
    report = guarded(version, "output", *hostile_command(server, version))
    [withheld] = report["calls"]
    assert withheld["isError"] is True
    assert "withheld" in withheld["ok"][0] and "hot" not in withheld["ok"][0]
    assert events(report, "output_invalid") == [
        ["weather", "invalid_structured_content", "withheld", "$.structuredContent.temperature"]
    ]
    assert server.calls() == [("weather", {"city": "Paris"})]


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_what_mcp1_models_refuse_never_sinks_the_page_or_the_call(
    selected: None, version: str
) -> None:
    """mcp 1.x validates a whole tools/list page with its `ListToolsResult` and a tools/call
    result with its `CallToolResult`; unguarded, a tool with `title: 5` (schema 2025-11-25:
    `title` is a string) or an icon whose `sizes` is a string (`string[]`) raises for the page,
    and a result without `content` (required) raises out of `call_tool`. Guarded, the two
    tools are removed (`sdk_rejects_tool`, at the field mcp 1.x names) and the result becomes
    JSON-RPC error -32603 (`sdk_rejects_result`)."""
    report = guarded(version, "sdkmodels")
    assert report["unguarded"] == {"listed": "ValidationError", "call": "ValidationError"}
    assert report["guarded"]["listed"] == ["echo"]
    data = {"source": "conduit-mcp.guard", "reason": "sdk_rejects_result"}
    assert report["guarded"]["call"] == {
        "error": -32603,
        "data": {**data, "tool": "echo", "path": "$.content"},
    }
    assert events(report, "tool_rejected") == [
        ["titled", "sdk_rejects_tool", "removed", "$.tools[1].title"],
        ["sized", "sdk_rejects_tool", "removed", "$.tools[2].icons[0].sizes"],
    ]


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_server_everything_plain_call_in_process(
    selected: None, version: str, server_everything_argv: list[str]
) -> None:
    """A real server (server-everything, TypeScript SDK) through the guard on mcp 1.x, on
    `guard.stdio_client(params)`: its tools listed, echo answered as the server's own source
    writes it (`Echo: <message>`)."""
    report = guarded(version, "everything", *server_everything_argv)
    assert "echo" in report["listed"]
    assert report["calls"] == [{"ok": ["Echo: hi"], "isError": False}]
    assert events(report, "tool_rejected") == []
    assert events(report, "unchecked") == []


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_items_that_are_no_mcp1_message_are_refused_both_ways(selected: None, version: str) -> None:
    """Fail closed: a raw dict and a `SessionMessage` around a bare `JSONRPCRequest` (no
    `JSONRPCMessage`) never reach the SDK, and the same item written by the client never
    reaches the server; each is an `unchecked` / `unrecognized_message` / `dropped` event naming
    its type. A transport error and real messages pass, as the same objects."""
    report = guarded(version, "unrecognized")
    assert report["received"] == ["ValueError", "SessionMessage"]
    assert report["received_same"] == [True, True]
    assert report["written"] == [True]
    found = [(e[0], e[2], e[3], e[5]["direction"], e[5]["type"]) for e in report["events"]]
    message = ("unchecked", "unrecognized_message", "dropped")
    assert found == [
        (*message, "incoming", "builtins.dict"),
        (*message, "incoming", "mcp.shared.message.SessionMessage"),
        (*message, "outgoing", "mcp.shared.message.SessionMessage"),
    ]
    assert [e[5].get("message_type") for e in report["events"]] == [
        None,
        "mcp.types.JSONRPCRequest",
        "mcp.types.JSONRPCRequest",
    ]
    assert {e[5]["sdk"] for e in report["events"]} == {"mcp 1.x"}


def mcp1_doc_blocks() -> list[str]:
    """docs/integrations.md's python blocks of its mcp 1.x section, in order."""
    section = DOC.read_text(encoding="utf-8").split("\n## mcp 1.x", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_docs_show_mcp1_in_process_then_through_the_proxy() -> None:
    """Accounting: the in-process block uses `guard.wrap_streams`, the proxy one does not."""
    in_process, through_proxy = mcp1_doc_blocks()
    assert "ClientSession(*guard.wrap_streams(read, write))" in in_process
    assert '"command": "conduit-mcp"' in through_proxy and "Guard" not in through_proxy


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_the_docs_in_process_block_runs_on_mcp1(
    selected: None, version: str, tmp_path: Path
) -> None:
    """conduit-defined: documentation that runs, as written, in the mcp 1.x venv."""
    script = tmp_path / "in_process.py"
    script.write_text(mcp1_doc_blocks()[0], encoding="utf-8")
    run_in(version, [str(script)])


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_the_docs_proxy_block_runs_on_mcp1(proxy: None, version: str, tmp_path: Path) -> None:
    """conduit-defined: documentation that runs, as written; `conduit-mcp` on PATH is this
    environment's (mcp 2), the client is the mcp 1.x venv's."""
    script = tmp_path / "through_proxy.py"
    script.write_text(mcp1_doc_blocks()[1], encoding="utf-8")
    path = f"{CONDUIT.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    run_in(version, [str(script)], env={**os.environ, "PATH": path})


@pytest.mark.parametrize("version", MCP1_VERSIONS)
def test_langchain_mcp_adapters_on_mcp1_through_the_proxy(
    proxy: None, version: str, hostile: Callable[[str], Hostile]
) -> None:
    """The server entry's command is `conduit-mcp proxy --server-id hostile -- <server>`:
    invalid arguments are refused unsent, and after the server changes echo's description the
    second listing drops echo and the tool the client already holds is refused (-32602 with
    the guard's reason, raised by langchain-mcp-adapters as the SDK's `McpError`)."""
    server = hostile("rugpull")
    command = [str(CONDUIT), "proxy", "--server-id", "hostile", "--", sys.executable]
    command += [str(HOSTILE), "--scenario", "rugpull", "--log", str(server.log)]
    report = json.loads(run_in(version, [str(CLIENT), *command]).stdout)
    assert report["mcp"] == version
    assert report["first"] == ["add", "echo"]
    assert report["second"] == ["add"]
    invalid, added, blocked = report["calls"]
    assert (invalid["error"], invalid["data"]["reason"]) == (-32602, "invalid_arguments")
    assert "'text': '3'" in added["ok"]
    assert (blocked["error"], blocked["data"]["reason"]) == (-32602, "tool_blocked")
    assert server.calls() == [("add", {"a": 1, "b": 2})]
