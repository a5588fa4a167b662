"""What the proxy writes itself (the guard's replacement of a server message, a message of an
HTTP upstream re-encoded for a stdio client) is one line to every line splitter, as what it
passes as read is: a raw NEL, LS or PS from a server string is written as a JSON escape.

Spec: MCP 2025-11-25 basic/transports "stdio" (messages MUST NOT contain embedded newlines);
the line ends of Python's `str.splitlines` (U+0085, U+2028, U+2029) and Node's `readline`
(CR) are the splitters' own documentation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCResponse

from conduit_mcp.proxy._message import dump_message, encode

from .conftest import proxy_argv

_BREAKS = "\u2028\u2029\u0085\r"

#: Lists one good tool whose description holds every line break, and one the guard rejects
#: (no inputSchema): the page the client gets is the guard's replacement.
SERVER = """
import json, sys
for raw in sys.stdin:
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    rid = m["id"]
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "s", "version": "1"}, "instructions": "i\\u2028j"}
    else:
        r = {"tools": [{"name": "good", "description": "a\\u2028b\\u2029c\\u0085d\\re",
                        "inputSchema": {"type": "object"}}, {"name": "bad"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": r},
                                ensure_ascii=False) + "\\n")
    sys.stdout.flush()
"""


def _one_line(data: bytes) -> str:
    text = data.decode("utf-8")
    assert text.endswith("\n") and len(text.splitlines()) == 1, text
    assert len(re.split(r"\r\n|\r|\n", text.rstrip("\n"))) == 1  # Node's readline
    return text


def test_the_guards_own_messages_are_one_line_to_every_splitter() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "a" + _BREAKS + "\ud800b"}}
    assert json.loads(_one_line(dump_message(message))) == message
    item = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={"t": "a" + _BREAKS}))
    assert json.loads(_one_line(encode(item)))["result"] == {"t": "a" + _BREAKS}
    plain = {"jsonrpc": "2.0", "id": 1, "result": {"text": "é ok"}}
    assert dump_message(plain) == '{"jsonrpc":"2.0","id":1,"result":{"text":"é ok"}}\n'.encode()


def test_a_replaced_page_reaches_a_stdio_client_as_one_line(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
    hello["clientInfo"] = {"name": "t", "version": "1"}
    sent = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    done = subprocess.run(
        [
            *proxy_argv("breaks", "--pins", str(tmp_path / "p.db"), "--new", "pin"),
            "--",
            sys.executable,
            str(script),
        ],
        input=b"".join(json.dumps(m).encode() + b"\n" for m in sent),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split(b"\n")[:-1]
    answers = {}
    for line in lines:
        message = json.loads(_one_line(line + b"\n"))
        answers[message["id"]] = message
    assert answers[1]["result"]["instructions"] == "i\u2028j"
    (tool,) = answers[2]["result"]["tools"]
    assert tool["name"] == "good"
    assert "\u2028" in tool["description"] and "\u2029" in tool["description"]  # as listed
