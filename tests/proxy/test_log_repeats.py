"""Refused calls on stderr: one line per (reason, tool) a minute, the next one shown saying how
many were left out; other records, and the JSON log file, keep every event. Memory bounded by a
small LRU of keys. Record times are set by the test (no clock read)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from conduit_mcp.guard import GuardEvent
from conduit_mcp.proxy._logs import REPEAT_KEYS, JsonLines, RepeatLimit


@pytest.fixture(autouse=True)
def _loggers_restored() -> Iterator[None]:
    """`configure` sets the proxy's loggers' level and propagation: put them back."""
    saved = [(log, log.level, log.propagate) for log in map(logging.getLogger, _NAMES)]
    yield
    for log, level, propagate in saved:
        log.setLevel(level)
        log.propagate = propagate


_NAMES = ("conduit_mcp.proxy", "conduit_mcp.guard")


def _refusal(tool: str, at: float, reason: str = "tool_held") -> logging.LogRecord:
    event = GuardEvent("call_refused", tool, reason, "refused", server_id="demo")
    record = logging.LogRecord(
        "conduit_mcp.guard", logging.WARNING, __file__, 1, "refused %s", (tool,), None
    )
    record.created = at
    record.guard_event = event
    return record


def _shown(limit: RepeatLimit, records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if limit.filter(r)]


def test_one_line_per_tool_and_reason_a_minute() -> None:
    limit = RepeatLimit()
    records = [_refusal("add", 1000.0 + i) for i in range(30)]  # 30 refusals in 30 s
    records += [_refusal("sub", 1001.0), _refusal("add", 1002.0, reason="tool_blocked")]
    records += [_refusal("add", 1060.0), _refusal("add", 1061.0)]
    assert _shown(limit, records) == [
        "refused add",
        "refused sub",
        "refused add",  # another reason: its own key
        "refused add (29 more like it not shown)",
    ]


def test_other_records_always_pass() -> None:
    limit = RepeatLimit()
    plain = logging.LogRecord("conduit_mcp.proxy", logging.WARNING, __file__, 1, "x", None, None)
    held = _refusal("add", 5.0)
    held.guard_event = GuardEvent("tool_new", "add", "new_tool", "held")
    assert all(limit.filter(r) for r in [plain, plain, held, held])


def test_memory_is_a_bounded_lru() -> None:
    limit = RepeatLimit()
    for i in range(REPEAT_KEYS * 4):
        assert limit.filter(_refusal(f"tool{i}" + "x" * 1000, 10.0))
    assert len(limit._seen) == REPEAT_KEYS
    assert all(len(tool or "") <= 200 for _, tool in limit._seen)
    # the oldest key was dropped: its next refusal is shown again within the minute
    assert limit.filter(_refusal("tool0" + "x" * 1000, 11.0))


def test_stderr_is_limited_the_log_file_keeps_every_event(tmp_path: Path) -> None:
    from conduit_mcp.proxy import _logs

    stream = io.StringIO()
    text = logging.StreamHandler(stream)
    text.addFilter(RepeatLimit())
    log_file = tmp_path / "proxy.log"
    handler = _logs.configure(log_file)
    logger = logging.getLogger("conduit_mcp.guard")
    logger.addHandler(text)
    try:
        for i in range(5):
            logger.handle(_refusal("add", 100.0 + i))
    finally:
        logger.removeHandler(text)
        for name in ("conduit_mcp.proxy", "conduit_mcp.guard"):
            logging.getLogger(name).removeHandler(handler)
        handler.close()
    assert stream.getvalue().splitlines() == ["refused add"]
    entries = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [e["event"]["kind"] for e in entries] == ["call_refused"] * 5
    assert isinstance(JsonLines(), logging.Formatter)


def test_configure_puts_the_limit_on_stderr_only(tmp_path: Path) -> None:
    from conduit_mcp.proxy import _logs

    for target in (None, tmp_path / "p.log"):
        handler = _logs.configure(target)
        try:
            limited = any(isinstance(f, RepeatLimit) for f in handler.filters)
            assert limited is (target is None)
        finally:
            for name in ("conduit_mcp.proxy", "conduit_mcp.guard"):
                logging.getLogger(name).removeHandler(handler)
            handler.close()
