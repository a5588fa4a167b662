"""Validation limits (issue 13, "Limits and failure"): hostile schemas and values get a verdict
or `limit_exceeded`, never a crash, a hang or a foreign exception.

The cases that once killed or stalled the interpreter run in a subprocess: a SIGSEGV there fails
one test instead of the run, and a generous timeout (20 s; the issue measured ~50 s for the
pattern and ~30 s for the schema on the old path, under 1 s on jsonschema-rs) stands in for a
timing assertion.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from conduit_mcp.client import Error, Tool, ToolResult, validate_structured
from conduit_mcp.client import _engine as engine

PRELUDE = textwrap.dedent("""
    import json, sys
    from conduit_mcp.client import Error, Tool, ToolResult, validate_structured

    def run(schema, value):
        tool = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": schema})
        result = ToolResult.from_wire({"content": [], "structuredContent": value})
        try:
            out = validate_structured(result, tool, protocol_version="2026-07-28")
        except Error as exc:
            return {"error": [exc.kind, exc.reason, list(exc.path)]}
        return {"outcome": out.outcome, "issues": [[list(e.path), e.keyword] for e in out.errors]}

    def nest(n, leaf):
        for _ in range(n):
            leaf = [leaf]
        return leaf
    """)


def _run(body: str) -> Any:
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, check=False
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout)


def test_deep_unique_items_gives_a_verdict_or_limit_exceeded_never_a_crash() -> None:
    """conduit-defined (issue 13: this input killed the interpreter with SIGSEGV): lists nested
    100,000 levels beside another item under `uniqueItems`. Two different items: the engine
    decides without descending (valid); two equal deep items: comparing them exhausts the
    engine's recursion budget, which is `limit_exceeded` at `structuredContent`."""
    got = _run("""
        schema = {"properties": {"tags": {"uniqueItems": True}}}
        deep = nest(100_000, [])
        print(json.dumps([run(schema, {"tags": [deep, 1]}),
                          run(schema, {"tags": [deep, nest(100_000, [])]})]))
        """)
    assert got[0] == {"outcome": "valid", "issues": []}
    assert got[1] == {"error": ["policy", "limit_exceeded", ["structuredContent"]]}


def test_deep_arrays_compared_by_unique_items_stay_within_the_engine_budget() -> None:
    """Known limit, pinned (issue 13 measured `limit_exceeded` at ~900 levels on the old path):
    jsonschema-rs 0.61.2 compares arrays for `uniqueItems` recursively with a budget of about
    255 levels, so two arrays 900 levels deep are still `limit_exceeded` (a documented policy
    Error, never a crash), while at 200 levels two equal arrays give the verdict `invalid`."""
    got = _run("""
        schema = {"properties": {"tags": {"uniqueItems": True}}}
        print(json.dumps([run(schema, {"tags": [nest(900, []), nest(900, [1])]}),
                          run(schema, {"tags": [nest(200, []), nest(200, [])]})]))
        """)
    assert got == [
        {"error": ["policy", "limit_exceeded", ["structuredContent"]]},
        {"outcome": "invalid", "issues": [[["tags"], "uniqueItems"]]},
    ]


def test_a_recursive_schema_and_a_100_000_level_value_is_limit_exceeded() -> None:
    """conduit-defined: the engine would overflow the C stack (measured: SIGSEGV between 5,000
    and 10,000 levels); the depth bound answers first."""
    got = _run("""
        schema = {"type": "array", "items": {"$ref": "#"}}
        print(json.dumps([run(schema, nest(100_000, [])), run(schema, nest(100, []))]))
        """)
    assert got == [
        {"error": ["policy", "limit_exceeded", ["structuredContent"]]},
        {"outcome": "valid", "issues": []},
    ]


def test_a_catastrophic_pattern_is_answered() -> None:
    """Spec-mandated (JSON Schema 2020-12 validation 6.3.3 `pattern`, ECMA-262): `^(a+)+$`
    against 28 `a`s and `!` does not match (hand check: `!` is not `a`); the old path took
    ~50 s in Python `re`."""
    got = _run("""
        print(json.dumps(run({"type": "string", "pattern": "^(a+)+$"}, "a" * 28 + "!")))
        """)
    assert got == {"outcome": "invalid", "issues": [[[], "pattern"]]}


def test_a_16_000_property_schema_compiles_and_validates() -> None:
    """conduit-defined (issue 13: ~30 s on the old path's meta-schema check)."""
    got = _run("""
        props = {f"p{i}": {"type": "integer"} for i in range(16_000)}
        schema = {"type": "object", "properties": props, "required": ["p0"]}
        value = {f"p{i}": i for i in range(16_000)}
        print(json.dumps([run(schema, value), run(schema, {"p1": "x"})]))
        """)
    assert got == [
        {"outcome": "valid", "issues": []},
        {"outcome": "invalid", "issues": [[[], "required"], [["p1"], "type"]]},
    ]


def test_big_integers_and_multiple_of_are_exact() -> None:
    """Spec-mandated (JSON Schema 2020-12 validation 6.2.1 `multipleOf`: 2**2000 is a multiple
    of 0.5; the old path said "could not be applied")."""
    tool = Tool.from_wire(
        "s", {"name": "t", "inputSchema": {}, "outputSchema": {"multipleOf": 0.5}}
    )
    for value, outcome in ((2**2000, "valid"), (2**2000 + 1, "valid"), (0.3, "invalid")):
        result = ToolResult.from_wire({"content": [], "structuredContent": value})
        assert validate_structured(result, tool, protocol_version="2026-07-28").outcome == outcome


class PanicException(BaseException):
    """Stands in for pyo3's panic type (same name and module), which the engine can raise."""


PanicException.__module__ = "pyo3_runtime"


class _Panicking:
    def is_valid(self, instance: Any) -> bool:
        raise PanicException("called `Option::unwrap()` on a `None` value")

    def iter_errors(self, instance: Any) -> Any:
        raise PanicException("boom")


def test_an_engine_panic_becomes_an_issue_not_an_exception() -> None:
    """conduit-defined (issue 13: nothing but our documented `Error` leaves these functions):
    a Rust panic surfacing from the engine is mapped; other BaseExceptions (KeyboardInterrupt)
    still propagate."""
    entry = engine.Compiled(_Panicking(), None, False, 1)
    issues: list[Any] = []
    assert engine.collect(entry, {}, "structuredContent", issues) is False
    assert [(i.path, i.kind) for i in issues] == [((), "protocol")]
    assert engine.is_panic(PanicException()) and not engine.is_panic(KeyboardInterrupt())

    class Interrupting(_Panicking):
        def is_valid(self, instance: Any) -> bool:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine.collect(engine.Compiled(Interrupting(), None, False, 1), {}, "x", [])


def test_importing_the_client_imports_neither_jsonschema_nor_pydantic() -> None:
    """conduit-defined (issue 13, item 7): the engines load on first use."""
    code = (
        "import sys, conduit_mcp.client as c; "
        "print(sorted(m for m in ('jsonschema', 'pydantic', 'jsonschema_rs', 'referencing') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout.replace("'", '"')) == []


def test_error_is_the_only_exception_for_a_hostile_schema() -> None:
    """conduit-defined: a schema nested 100,000 levels is `limit_exceeded`, not a crash."""
    schema: Any = {}
    for _ in range(100_000):
        schema = {"items": schema}
    tool = Tool.from_wire("s", {"name": "t", "inputSchema": {}, "outputSchema": schema})
    result = ToolResult.from_wire({"content": [], "structuredContent": []})
    with pytest.raises(Error) as info:
        validate_structured(result, tool, protocol_version="2026-07-28")
    assert (info.value.reason, info.value.path) == ("limit_exceeded", ("outputSchema",))
