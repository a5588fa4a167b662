"""The call gate's shortcut for valid arguments decides exactly as the full argument check.

A listed tool whose inputSchema is checked inline keeps its compiled validator on its state
(`arguments_validator`): arguments it finds valid pass without `validate_arguments`; anything
else goes the full way. The oracle is `validate_arguments` itself (on every corpus tool, at a
draft-07 and a 2020-12 version, on arguments made from each schema's properties) and the gate
with the shortcut switched off (the same verdicts and events on made arguments, across a
re-listing that changes the schema).
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.client import Error, Tool, arguments_validator, validate_arguments
from conduit_mcp.guard import Guard, _checks
from conduit_mcp.guard._engine import Engine
from conduit_mcp.guard._state import Pending
from tests.corpus import all_tools
from tests.property.profiles import bounded

VERSIONS = ("2025-03-26", "2025-11-25")  # draft-07 and 2020-12 without `$schema`
_VALUES: tuple[Any, ...] = ("x", "", 0, 1.5, -3, True, None, [], ["a"], {}, {"a": 1})


def _made_arguments(schema: Any) -> list[Any]:
    """Argument objects around `schema`: empty, every required member a string, and each
    property given each kind of JSON value."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required") if isinstance(schema, dict) else None
    base = {n: "x" for n in required if isinstance(n, str)} if isinstance(required, list) else {}
    made: list[Any] = [{}, base, {**base, "zz_unknown": 1}]
    for name in list(properties)[:6]:
        made += [{**base, name: value} for value in _VALUES]
    return made


def test_the_validator_says_valid_exactly_when_validate_arguments_does() -> None:
    checked = 0
    for _, _, raw in all_tools():
        try:
            tool = Tool.from_wire("corpus", raw)
        except Error:
            continue
        for version in VERSIONS:
            validator = arguments_validator(tool, protocol_version=version)
            if validator is None:
                continue
            for arguments in _made_arguments(tool.input_schema):
                full = validate_arguments(tool, arguments, protocol_version=version)
                assert validator.is_valid(arguments) == (full.outcome == "valid"), (
                    tool.name,
                    version,
                    arguments,
                )
                checked += 1
    assert checked > 5000  # the shortcut applies to most of the corpus


def test_no_shortcut_for_a_schema_that_loops_or_cannot_be_used() -> None:
    looping = Tool.from_wire(
        "s",
        {
            "name": "tree",
            "inputSchema": {
                "type": "object",
                "$defs": {
                    "node": {"type": "object", "properties": {"k": {"$ref": "#/$defs/node"}}}
                },
                "properties": {"root": {"$ref": "#/$defs/node"}},
            },
        },
    )
    assert arguments_validator(looping, protocol_version="2025-11-25") is None
    foreign = Tool.from_wire(
        "s",
        {"name": "old", "inputSchema": {"$schema": "http://example.com/s", "type": "object"}},
    )
    assert arguments_validator(foreign, protocol_version="2025-11-25") is None


ECHO = {
    "name": "echo",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
        "required": ["message"],
    },
}
#: ECHO re-listed with another schema (the kept validator must not be reused for it).
ECHO_CHANGED = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "integer"}}},
}


class _Gate:
    """One engine at 2025-11-25 that lets a changed tool through (`changed="allow"`)."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.guard = Guard("argfast", on_event=self.events.append, changed="allow")
        self.engine = Engine(self.guard._shared, "stdio")
        self.engine.version = "2025-11-25"
        self.list(ECHO)

    def list(self, tool: dict[str, Any]) -> None:
        anyio.run(self.engine._on_list, 1, {"tools": [tool]}, Pending("tools/list"))

    def call(self, arguments: Any) -> tuple[Any, list[Any]]:
        self.events.clear()
        params = {"name": "echo", "arguments": arguments}
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        verdict = self.engine.outbound_now(message)
        self.engine.outstanding.cancel(7)  # the id is free for the next call
        events = [(e.kind, e.reason, e.decision, e.path, e.message) for e in self.events]
        return (verdict.action, verdict.message), events  # type: ignore[union-attr]


_ARGUMENTS = st.one_of(
    st.none(),
    st.just([]),
    st.dictionaries(
        st.sampled_from(["message", "n", "other"]),
        st.one_of(st.text(max_size=4), st.integers(-3, 3), st.none(), st.booleans()),
        max_size=3,
    ),
)


@bounded(150)
@given(arguments=st.lists(_ARGUMENTS, min_size=1, max_size=6), relist=st.integers(0, 6))
def test_the_gate_decides_as_without_the_shortcut(arguments: list[Any], relist: int) -> None:
    fast, full = _Gate(), _Gate()
    saved = _checks.arguments_validator
    for index, value in enumerate(arguments):
        if index == relist:
            fast.list(ECHO_CHANGED)
            full.list(ECHO_CHANGED)
        expected_fast = fast.call(value)
        _checks.arguments_validator = lambda tool, protocol_version: None  # type: ignore
        try:
            expected = full.call(value)
        finally:
            _checks.arguments_validator = saved  # type: ignore[assignment]
        assert expected_fast == expected, value


def test_the_shortcut_fires_and_still_refuses() -> None:
    gate = _Gate()
    assert gate.call({"message": "hi"})[0] == ("pass", None)
    state = gate.engine.shared.book.tools["echo"]
    assert state.input_check is not None and state.input_check[2] is not None
    (action, answer), events = gate.call({"message": 3})
    assert action == "answer" and answer is not None
    assert answer["error"]["data"]["reason"] == "invalid_arguments"
    assert answer["error"]["data"]["path"] == "$.arguments.message"
    assert events[0][:2] == ("call_refused", "invalid_arguments")


class _Panicking:
    """A validator whose `is_valid` fails as a Rust panic does (a `BaseException`)."""

    def is_valid(self, instance: Any) -> bool:
        raise _Panic("validator panicked")


class _Panic(BaseException):
    pass


def test_a_failing_shortcut_leaves_the_decision_to_the_full_check() -> None:
    gate = _Gate()
    assert gate.call({"message": "hi"})[0] == ("pass", None)
    state = gate.engine.shared.book.tools["echo"]
    assert state.input_check is not None
    state.input_check = (state.input_check[0], state.input_check[1], _Panicking())
    assert gate.call({"message": "hi"})[0] == ("pass", None)
    (action, _), events = gate.call({"message": 3})
    assert action == "answer" and events[0][:2] == ("call_refused", "invalid_arguments")
