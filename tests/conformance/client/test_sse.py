"""The conformance client's SSE parser, against the WHATWG event-stream rules and examples."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.property.profiles import bounded

from .sse import SseEvent, SseParser


def parse(*chunks: bytes) -> list[SseEvent]:
    parser = SseParser()
    events: list[SseEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def datas(events: list[SseEvent]) -> list[str]:
    return [event.data for event in events]


def test_sse_joins_data_lines_with_lf() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6 "Interpreting an event stream", first example): three
    data lines make one event whose data is the lines joined by LF."""
    events = parse(b"data: YHOO\ndata: +2\ndata: 10\n\n")
    assert events == [SseEvent("message", "YHOO\n+2\n10", "")]


def test_sse_reads_comments_ids_and_one_leading_space() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6, second example): a comment is ignored, `id` sets the
    last event ID (a bare `id` resets it to empty), and only one leading space is removed."""
    stream = (
        b": test stream\n\ndata: first event\nid: 1\n\n"
        b"data:second event\nid\n\ndata:  third event\n\n"
    )
    assert parse(stream) == [
        SseEvent("message", "first event", "1"),
        SseEvent("message", "second event", ""),
        SseEvent("message", " third event", ""),
    ]


def test_sse_empty_data_fields_and_an_unterminated_event() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6, third example): `data` alone gives an empty event,
    two give one LF, and a last event with no blank line after it is discarded."""
    assert datas(parse(b"data\n\ndata\ndata\n\ndata:")) == ["", "\n"]


def test_sse_space_after_colon_is_optional() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6, fourth example): `data:test` and `data: test` are the
    same event data."""
    assert datas(parse(b"data:test\n\ndata: test\n\n")) == ["test", "test"]


def test_sse_block_without_data_dispatches_nothing() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6 "dispatch the event": "If the data buffer is an empty
    string, set the data buffer and the event type buffer to the empty string and return"):
    an `event:`/`id:` block with no data line is not an event, and its type does not leak."""
    events = parse(b"event: ping\nid: 7\n\ndata: x\n\n")
    assert events == [SseEvent("message", "x", "7")]


def test_sse_event_type_applies_to_one_event() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6: the event type buffer is reset after dispatch)."""
    events = parse(b"event: add\ndata: 1\n\ndata: 2\n\n")
    assert [(e.event, e.data) for e in events] == [("add", "1"), ("message", "2")]


def test_sse_accepts_cr_lf_and_crlf_line_ends() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5 "end-of-line = ( cr lf / cr / lf )")."""
    for eol in (b"\n", b"\r", b"\r\n"):
        stream = b"data: a" + eol + b"data: b" + eol + eol
        assert datas(parse(stream)) == ["a\nb"], eol


def test_sse_crlf_split_across_chunks_is_one_line_end() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5): CR then LF is one line end even when a chunk ends
    between them (else the LF would read as an empty line and dispatch early)."""
    events = parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert datas(events) == ["a\nb"]


def test_sse_unicode_line_separators_do_not_end_lines() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5: only CR and LF end lines): a JSON text with a raw
    U+2028, U+0085 or form feed stays one data line."""
    text = '{"t": "a\u2028b\u0085c\x0cd\x1ce"}'
    assert datas(parse(b"data: " + text.encode() + b"\n\n")) == [text]


def test_sse_leading_bom_is_dropped_once() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5 "stream = [ bom ] *event"): one BOM at the start of the
    stream is skipped; a later one is data."""
    events = parse(b"\xef\xbb\xbf", b"data: \xef\xbb\xbfx\n\n")
    assert datas(events) == ["\ufeffx"]


def test_sse_invalid_utf8_is_replaced() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5: the stream is decoded with UTF-8 decode, which
    replaces invalid bytes with U+FFFD)."""
    assert datas(parse(b"data: a\xffb\n\n")) == ["a\ufffdb"]


def test_sse_retry_needs_digits_and_id_refuses_nul() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6: `retry` only when all ASCII digits; an `id` value with
    NULL is ignored)."""
    parser = SseParser()
    events = parser.feed(b"retry: 10x\nretry: 2500\nid: 1\nid: a\x00b\ndata: d\n\n")
    assert parser.retry_ms == 2500
    assert events == [SseEvent("message", "d", "1")]


def test_sse_unknown_fields_are_ignored() -> None:
    """Spec-mandated (WHATWG HTML 9.2.6 "Otherwise: The field is ignored")."""
    assert datas(parse(b"foo: bar\ndata: x\nDATA: y\n\n")) == ["x"]


STREAM = (
    ": keep-alive\r\n"
    "id: 1\ndata:\n\n"  # a priming event: an id and empty data
    "event: message\r"
    'data: {"jsonrpc": "2.0", "method": "notifications/progress"}\r\r'
    'data: {"jsonrpc": "2.0", "id": 1,\r\n'
    'data:  "result": {"text": "Hello, 世界 \u2028"}}\r\n\r\n'
).encode()

EXPECTED = [
    SseEvent("message", "", "1"),
    SseEvent("message", '{"jsonrpc": "2.0", "method": "notifications/progress"}', "1"),
    SseEvent(
        "message", '{"jsonrpc": "2.0", "id": 1,\n "result": {"text": "Hello, 世界 \u2028"}}', "1"
    ),
]


def test_sse_whole_stream_gives_the_expected_events() -> None:
    """Spec-mandated (WHATWG HTML 9.2.5/9.2.6, as combined above; the table is worked out by
    hand from the rules)."""
    assert parse(STREAM) == EXPECTED


@bounded(200)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_sse_chunk_boundaries_never_change_the_events(cuts: list[int]) -> None:
    """Spec-mandated (WHATWG HTML 9.2.5: the format is a byte stream; TCP chunking is not part
    of it): any split of the stream — inside a UTF-8 sequence, between CR and LF — parses
    the same."""
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse(*chunks) == EXPECTED
