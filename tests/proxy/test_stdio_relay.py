"""The stdio relay: each line read once, the bytes a sender wrote passed on when the guard lets
the message pass, lines that are no message answered (client) or dropped (server), a member
named twice never passed as written.

Spec: MCP 2025-11-25 basic/transports "stdio" (newline-delimited JSON-RPC, UTF-8); JSON-RPC
2.0 section 5.1 (the error object for a request that cannot be read) and section 6 (a batch:
the SDK's transport reads no batch, so the proxy answers one as an invalid request); RFC 8259
section 4 (names within an object SHOULD be unique; parsers differ on duplicates).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio

from conduit_mcp.proxy._message import read_message
from conduit_mcp.proxy.stdio._framing import LineReader, LineTooLong, chunk_size
from conduit_mcp.proxy.stdio._relay import ChunkReader

from .conftest import proxy_argv

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}

#: Lines the scripted server writes, byte for byte, for each method it is asked (the id is
#: put in place of ID). Python's `json.dumps` defaults: ", " and ": ", non-ASCII escaped.
SPACED = (
    '{"jsonrpc": "2.0", "id": ID, "result": '
    '{"note": "\\u00e9t\\u00e9", "big": 1180591620717411303424, "x": 1.5e+300}}'
)
DUPLICATE = '{"jsonrpc":"2.0","id":ID,"result":{"v":"first","v":"last"}}'
NOISE = [
    "[1, 2]",
    '"a string"',
    "{broken",
    '[{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}]',
    '{"jsonrpc": "2.0", "method": "notifications/message", '
    '"params": {"level": "info", "data": "\\u00e9"}}',
]

SERVER = """
import json, sys
log = open(sys.argv[1], "ab")
SPACED, DUPLICATE, NOISE = json.loads(sys.argv[2])
for raw in sys.stdin.buffer:
    log.write(raw); log.flush()
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    rid = json.dumps(m["id"])
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {}}
        r["serverInfo"] = {"name": "s", "version": "1"}
        out = [json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r})]
    elif m["method"] == "x/spaced":
        out = [SPACED.replace("ID", rid)]
    elif m["method"] == "x/duplicate":
        out = [DUPLICATE.replace("ID", rid)]
    else:
        out = NOISE + [json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {}})]
    sys.stdout.buffer.write("".join(line + "\\n" for line in out).encode())
    sys.stdout.buffer.flush()
"""


def _run(tmp_path: Path, client_lines: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """(lines the client read, lines the server read)."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    received = tmp_path / "received"
    received.write_bytes(b"")
    scripted = json.dumps([SPACED, DUPLICATE, NOISE])
    done = subprocess.run(
        [*proxy_argv("relay"), "--", sys.executable, str(script), str(received), scripted],
        input=b"".join(client_lines),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(keepends=True), received.read_bytes().splitlines(keepends=True)


def _line(message: dict[str, Any], **dumps: Any) -> bytes:
    return json.dumps(message, **dumps).encode() + b"\n"


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    for key, value in pairs:
        assert key not in counts, f"member {key!r} named twice"
        counts[key] = value
    return counts


def test_messages_pass_as_the_sender_wrote_them(tmp_path: Path) -> None:
    """The server's spaced, escaped line (an integer past 64 bits, a float near the double
    limit) and the client's own spaced request reach the other side byte for byte."""
    request = _line({"jsonrpc": "2.0", "id": 2, "method": "x/spaced", "params": {"k": "é"}})
    replies, received = _run(tmp_path, [_line(INIT), request])
    expected = (SPACED.replace("ID", "2") + "\n").encode()
    assert expected in replies
    assert request in received  # json.dumps(ensure_ascii=True): "\u00e9", as sent


def test_a_member_named_twice_reaches_the_client_once(tmp_path: Path) -> None:
    """Parsers disagree on `{"v": 1, "v": 2}` (most keep the last, some the first): the client
    gets the message as the guard read it, the member once, never the ambiguous bytes."""
    replies, _ = _run(
        tmp_path, [_line(INIT), _line({"jsonrpc": "2.0", "id": 3, "method": "x/duplicate"})]
    )
    answer = [r for r in replies if b'"id":3' in r.replace(b" ", b"")]
    assert len(answer) == 1
    parsed = json.loads(answer[0], object_pairs_hook=_pairs)
    assert parsed["result"] == {"v": "last"}  # Python's json, pydantic and JavaScript keep the last


def test_lines_that_are_no_message_never_reach_the_client(tmp_path: Path) -> None:
    """The server's batch, bare string and broken JSON are dropped; the notification between
    them and the answer after them still arrive, in order."""
    replies, _ = _run(
        tmp_path, [_line(INIT), _line({"jsonrpc": "2.0", "id": 4, "method": "x/noise"})]
    )
    messages = [json.loads(r) for r in replies]
    assert all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in messages)
    tail = messages[-2:]
    assert tail[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "é"},
    }
    assert tail[1] == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert len(messages) == 3  # initialize, the notification, the answer


#: Client lines that are no message, with the error code and id each is answered with.
NO_MESSAGE = [
    (b'[{"jsonrpc": "2.0", "id": 5, "method": "ping"}]\n', -32600, None),  # a batch
    (b'"ping"\n', -32600, None),
    (b"42\n", -32600, None),
    (b'{"jsonrpc": "2.0", "id": 6, "method": 7}\n', -32600, 6),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "ping"\n', -32700, None),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": []}\n', -32600, 9),
]


def test_client_lines_that_are_no_message_are_answered_and_not_sent(tmp_path: Path) -> None:
    """JSON-RPC 2.0 section 5.1: -32700 for text that is not JSON, -32600 for JSON that is no
    request (a batch included: the stdio transport reads none), with the request's id when it
    can be read (params that are no object make no request either). All six lines in one
    session (one proxy start, not six): each gets its own error, none reaches the server."""
    replies, received = _run(tmp_path, [_line(INIT), *(line for line, _, _ in NO_MESSAGE)])
    for line, _, _ in NO_MESSAGE:
        assert all(line.strip() != r.strip() for r in received)
    assert len(received) == 1  # only the initialize request reached the server
    errors = [json.loads(r) for r in replies if b'"error"' in r]
    found = sorted((repr(e["id"]), e["error"]["code"]) for e in errors)
    assert found == sorted((repr(rid), code) for _, code, rid in NO_MESSAGE)


def test_read_message_takes_the_reading_every_parser_agrees_on() -> None:
    """Unit: compact lines pass as read; spaced ones too; a member named twice, an extra member
    or an id that is a float take the SDK's reading (as written by the SDK)."""
    compact = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert read_message(compact) == ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, compact)
    spaced = b'{"jsonrpc": "2.0", "id": 1, "result": {"n": 100000000000000000000001}}\n'
    message, data = read_message(spaced)  # type: ignore[misc]
    assert data == spaced and message["result"]["n"] == 100000000000000000000001
    twice = b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}\n'
    message, data = read_message(twice)  # type: ignore[misc]
    assert message["result"] == {"a": 2} and json.loads(data, object_pairs_hook=_pairs) == message
    extra = b'{"jsonrpc":"2.0","id":1,"method":"ping","other":1}\n'
    message, data = read_message(extra)  # type: ignore[misc]
    assert "other" not in message and b"other" not in data
    assert read_message(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n') is None
    assert read_message(b'{"jsonrpc":"1.0","id":1,"method":"ping"}\n') is None


def test_read_message_sends_one_line_to_every_line_splitter() -> None:
    """Unit: a message holding a byte some client ends a line at (CR as JSON white space: Node's
    readline and Python's universal newlines; raw NEL, LS, PS in a string: str.splitlines) is
    sent escaped, so no client cuts a second, unchecked message out of it; the message the
    guard read is unchanged. A number past a float beside a CR (JSON cannot write it back) is
    no message."""
    smuggled = b'{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'
    lines = [
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":\r'
        + smuggled
        + b"\r}}\n",  # CR as white space: the standard library's reading
        json.dumps(  # compact: orjson writes it back byte for byte
            {"jsonrpc": "2.0", "method": "m", "params": {"d": "\u2028\u2029\u0085 {}"}},
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        + b"\n",
        b'{"jsonrpc":"2.0","method":"x","params":{"a":1,"a":"\xe2\x80\xa8"}}\r\n',  # the SDK's
    ]
    for line in lines:
        message, data = read_message(line)  # type: ignore[misc]
        text = data.decode("utf-8")
        assert text.endswith("\n") and len(text.splitlines()) == 1
        assert len(re.split(r"\r\n|\r|\n", text.rstrip("\n"))) == 1  # Node's readline
        assert json.loads(text, object_pairs_hook=_pairs) == message
        assert "id" not in message
    assert read_message(b'{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}\r\n') is None
    # a member named twice takes the SDK's reading, which writes infinity as `null`: the
    # guard would read one number and the client another (a hostile review)
    assert read_message(b'{"jsonrpc": "2.0", "id": 1, "result": {"a": 1, "a": 1e400}}\n') is None


def test_line_reader_cuts_lines_across_chunks_and_bounds_them() -> None:
    """Unit: lines split over chunks and several in one chunk, blank lines skipped, a line past
    the limit reported once and skipped, the last line without a newline still read."""
    chunks = [b'{"a"', b':1}\n\n{"b":2}\n{"c"', b"x" * 40, b'}\n{"d":4}\n  \n{"e":5}']

    async def collect() -> list[Any]:
        source = iter(chunks)

        async def read() -> bytes:
            return next(source, b"")

        reader = LineReader(read, max_line=32, keep_newline=True)
        found: list[Any] = []
        while True:
            try:
                line = await reader.next_line()
            except LineTooLong:
                found.append("too long")
                continue
            if line is None:
                return found
            found.append(bytes(line))

    assert anyio.run(collect) == [
        b'{"a":1}\n',
        b'{"b":2}\n',
        "too long",
        b'{"d":4}\n',
        b'{"e":5}\n',
    ]


def test_the_raw_definitions_kept_do_not_grow_with_the_session() -> None:
    """A server that lists fresh names at every listing: the raw definitions the proxy keeps
    for its approval hints hold the guard's current tools and one page (here 2 x 20), never
    every name listed in the session (200 listings: 4,000 names)."""
    from conduit_mcp.proxy import GuardSeam, GuardSettings

    async def main() -> tuple[int, Any]:
        seam = GuardSeam(GuardSettings(server_id="grow"))

        async def write(message: dict[str, Any]) -> None:
            raise AssertionError(message)

        link = seam.connect(write)
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        await link.from_client({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        await link.from_server(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {**hello, "serverInfo": {"name": "s", "version": "1"}},
            }
        )
        for n in range(1, 201):
            await link.from_client({"jsonrpc": "2.0", "id": n, "method": "tools/list"})
            tools = [{"name": f"t{n}_{i}", "inputSchema": {"type": "object"}} for i in range(20)]
            await link.from_server({"jsonrpc": "2.0", "id": n, "result": {"tools": tools}})
        kept = sum(1 for n in range(1, 201) for i in range(20) if seam.raw_tool(f"t{n}_{i}"))
        last = seam.raw_tool("t200_0")
        seam.close()
        return kept, last

    kept, last = anyio.run(main)
    assert kept <= 40
    assert last == {"name": "t200_0", "inputSchema": {"type": "object"}}


def test_chunks_read_into_one_buffer_are_each_their_own_bytes() -> None:
    """conduit-defined (`ChunkReader`, issue 33: one buffer per thread in place of a 256 KiB
    allocation per read): what a pipe carried comes out whole and in order, a chunk never
    longer than `chunk_size()`, each chunk a `bytes` of its own (a later read into the shared
    buffer leaves the earlier chunks as they were), then `b""` at the end; a descriptor made
    non-blocking is waited on, not read as the end."""
    read_fd, write_fd = os.pipe()
    first = b'{"jsonrpc":"2.0","method":"a"}\n'
    large = b"x" * (chunk_size() + chunk_size() // 2) + b"\n"
    chunks = ChunkReader(read_fd)
    os.write(write_fd, first)
    got = [chunks()]
    assert got == [first] and type(got[0]) is bytes
    os.set_blocking(read_fd, False)
    writer = threading.Thread(target=lambda: (os.write(write_fd, large), os.close(write_fd)))
    writer.start()
    while chunk := chunks():
        got.append(chunk)
    writer.join()
    os.close(read_fd)
    assert got[0] == first  # not overwritten by the reads after it
    assert all(len(chunk) <= chunk_size() for chunk in got)
    assert b"".join(got) == first + large


def test_a_spaced_line_passes_as_read_unless_a_member_is_named_twice() -> None:
    """RFC 8259 section 4 (names SHOULD be unique; parsers differ on which one counts) and
    section 7 (a string's escapes): a line that is not compact (as Python's `json.dumps`
    writes) passes as read when no object names a member twice, whatever its strings hold
    (escaped quotes, a backslash before a closing quote, colons, `\\u0022`); a member named
    twice, also under another spelling (`"a"` and `"\\u0061"`), or nested, or beside a
    string that looks like a member, takes the SDK's reading instead: the bytes sent name it
    once. The oracle: the standard library's parser with every member pair kept."""
    tricky = {"s": 'x\\": y', "t": "c\\\\", "u": '": "k": 1, "', "v": ["a:b", {"w": ':"'}]}
    plain = json.dumps({"jsonrpc": "2.0", "id": 4, "result": tricky}).encode() + b"\n"
    message, data = read_message(plain)  # type: ignore[misc]
    assert data == plain and message == json.loads(plain)
    escaped = b'{"jsonrpc": "2.0", "id": 5, "result": {"q": "\\u0022a\\u0022: 1"}}\n'
    assert read_message(escaped) == (json.loads(escaped), escaped)
    twice = [
        b'{"jsonrpc": "2.0", "id": 6, "result": {"a": 1, "a": 2}}\n',
        b'{"jsonrpc": "2.0", "id": 6, "result": {"a": 1, "\\u0061": 2}}\n',
        b'{"jsonrpc": "2.0", "id": 6, "result": {"x": {"b": ":", "b": "\\\\"}}}\n',
        b'{"jsonrpc": "2.0", "id": 6, "result": {"k": "\\"a\\": 1", "a": 1, "a": 2}}\n',
        b'{"jsonrpc": "2.0", "id": 6, "id": 6, "result": {}}\n',
        # a colon spelled `\u003a` where a repeated member's colon went: the counts agree
        b'{"jsonrpc": "2.0", "id": 6, "result": {"k": "\\u003a", "a": 1, "a": 2}}\n',
    ]
    for line in twice:
        pairs = json.loads(line, object_pairs_hook=lambda p: p)
        assert pairs  # the oracle sees the repeat the line holds
        found = read_message(line)
        assert found is not None, line
        message, data = found
        assert data != line, line
        json.loads(data, object_pairs_hook=_pairs)  # names every member once
        assert message == json.loads(data)


def test_a_line_nested_past_orjsons_writer_is_read_not_raised() -> None:
    """Real parts: orjson reads 1,024 levels of nesting but writes only 255 (its `dumps` raises
    `JSONEncodeError`, "Recursion limit reached"): a message 300 levels deep from either side is
    read by the standard library and passed as written, never an exception that ends the relay
    (found in review: one such line from a server or a client stopped the proxy)."""
    deep = b"[" * 300 + b"]" * 300
    for line in (
        b'{"jsonrpc":"2.0","id":2,"result":{"x":' + deep + b"}}\n",
        b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"x": ' + deep + b"}}\n",
    ):
        found = read_message(line)
        assert found is not None
        message, data = found
        assert data == line
        assert message == json.loads(line)
