"""Property tests: the stdio relay's blocking line reader cuts any stream, in any chunks, into
the lines a plain split of the whole stream gives.

MCP 2025-11-25 basic/transports "stdio": messages are delimited by newlines. The oracle is
`bytes.split` of the concatenated stream (blank lines dropped, as the relay skips them), not
the reader's own cutting. The chunks cover the reader's shortcut (a chunk that is one whole
line) and the other cases: lines across chunks, several lines in one chunk, a chunk after a
partial line. Lines past the limit: tests/proxy/test_stdio_relay.py.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from conduit_mcp.proxy.stdio._framing import BlockingLineReader, LineTooLong
from tests.property.profiles import bounded

#: The longest line kept in these tests (bytes, newline excluded).
LIMIT = 12
#: Lines of JSON-ish text, blank ones, white space only, up to `LIMIT` bytes.
LINES = st.one_of(
    st.sampled_from([b"", b" ", b"\t ", b"\r", b"{}", b'{"a":1}', b"x" * LIMIT]),
    st.binary(max_size=LIMIT).map(lambda data: data.replace(b"\n", b"")),
)


def _expected(stream: bytes, keep: bool) -> list[Any]:
    """The lines of `stream` by a plain split: blank ones dropped, the last one kept without
    its newline (then given one when `keep`)."""
    return [
        piece + b"\n" if keep else piece
        for piece in stream.split(b"\n")
        if piece and not piece.isspace()
    ]


def _read(chunks: list[bytes], keep: bool) -> list[Any]:
    source = iter(chunks)
    reader = BlockingLineReader(lambda: next(source, b""), max_line=LIMIT, keep_newline=keep)
    found: list[Any] = []
    while True:
        try:
            line = reader.next_line()
        except LineTooLong:
            found.append("too long")
            continue
        if line is None:
            return found
        found.append(bytes(line))


@given(
    lines=st.lists(LINES, max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
    whole=st.booleans(),
    keep=st.booleans(),
)
@example(lines=[b'{"a":1}', b'{"b":2}'], cuts=[], whole=True, keep=True)
@example(lines=[b"x" * LIMIT, b'{"b":2}'], cuts=[5, 9], whole=False, keep=False)
@example(lines=[b" ", b'{"b":2}'], cuts=[3], whole=False, keep=True)
@bounded(200)
def test_any_chunks_give_the_lines_of_a_plain_split(
    lines: list[bytes], cuts: list[int], whole: bool, keep: bool
) -> None:
    """Chunks one line each (`whole`: every line with its newline, the reader's shortcut), or
    the stream cut at arbitrary offsets: the same lines as splitting the stream at once."""
    stream = b"".join(line + b"\n" for line in lines)
    if whole:
        chunks = [line + b"\n" for line in lines]
    else:
        offsets = sorted({0, len(stream), *(cut for cut in cuts if cut < len(stream))})
        chunks = [stream[a:b] for a, b in itertools.pairwise(offsets) if b > a]
    # The last line of a stream without a final newline: an unterminated tail is read too.
    assert _read(chunks, keep) == _expected(stream, keep)
    tail = b'{"z":0}'
    assert _read([*chunks, tail], keep) == [*_expected(stream, keep), *_expected(tail, keep)]
