"""Which way a tool's `inputSchema` or `outputSchema` moved: narrows, widens, both, unknown.

Not a public module: `schema_change` and `schema_changes` are exported from
`conduit_mcp.pins`. Built on jsonschema-rs's canonical schema algebra (0.61: `canonicalize`,
`CanonicalSchema.covers`, `subtract`, `satisfiability`), which proves containment between the
value sets two schemas accept, or says it cannot decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

SchemaChange = Literal["unchanged", "narrows", "widens", "both", "unknown"]
"""`schema_change`'s answer about the set of values a schema accepts."""

#: The schema members of a tool whose change `schema_changes` classifies.
SCHEMA_MEMBERS: Final = ("inputSchema", "outputSchema")

_DEFAULT_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
#: The largest schema (JSON values in it, the schema itself and every member and item)
#: the algebra is asked about; a larger one is "unknown". Its time grows faster than the
#: schema: 500 properties took 0.1 s, 2,000 took 1.6 s, 5,000 took 8.5 s of CPU.
MAX_SCHEMA_NODES: Final = 1_000


def schema_change(old: Any, new: Any) -> SchemaChange:
    """Whether `new` accepts fewer values than `old`, more, some of each, or the same.

    Args:
        old, new: JSON Schemas (objects or booleans; `None` reads as `true`: a tool without
            an `outputSchema` may return anything). A schema without `$schema` is read as
            JSON Schema 2020-12, the MCP default dialect.

    Returns:
        `"unchanged"` (each accepts every value the other does), `"narrows"` (every value
        `new` accepts, `old` accepted: proven), `"widens"` (every value `old` accepted, `new`
        accepts: proven), `"both"` (values were removed and values were added: proven both
        ways), or `"unknown"` when the algebra cannot decide (a construct it does not model,
        such as some `$ref` cycles or `format` assertions, or a schema it cannot read), or
        when either schema holds more than `MAX_SCHEMA_NODES` JSON values.
        For an `inputSchema`, "narrows" means some calls that were valid are now refused;
        for an `outputSchema`, that the tool promises less varied results.

    Total: never raises; any failure of the algebra is `"unknown"`. Time is bounded: the
    algebra's grows faster than the schemas' size, so a larger schema than
    `MAX_SCHEMA_NODES` is not given to it (not for the guard's hot path).

    Spec: JSON Schema 2020-12 (the accepted-value semantics); MCP 2026-07-28 server/tools
    "Tool" (`inputSchema`, `outputSchema`; 2020-12 when `$schema` is absent).
    """
    if _too_large(old) or _too_large(new):
        return "unknown"
    try:
        import jsonschema_rs
        from jsonschema_rs.canonical import Containment, Satisfiability

        before = _canonical(jsonschema_rs, old)
        after = _canonical(jsonschema_rs, new)
        narrows = before.covers(after) == Containment.YES  # new within old
        widens = after.covers(before) == Containment.YES  # old within new
        if narrows and widens:
            return "unchanged"
        if narrows:
            return "narrows"
        if widens:
            return "widens"
        removed = before.subtract(after).satisfiability() == Satisfiability.YES
        added = after.subtract(before).satisfiability() == Satisfiability.YES
        return "both" if removed and added else "unknown"
    except Exception:  # an undecidable or unreadable schema is "unknown", never an error
        return "unknown"


def schema_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, SchemaChange]:
    """`schema_change` of each schema member (`inputSchema`, `outputSchema`) that differs
    between two tool definitions.

    Args:
        old, new: tool definitions as JSON objects (the approved one and the listed one).

    Returns:
        Member name -> its `SchemaChange`, only for members whose JSON differs (a missing
        member reads as `true`); `{}` when neither changed.
    """
    out: dict[str, SchemaChange] = {}
    for member in SCHEMA_MEMBERS:
        before, after = old.get(member), new.get(member)
        if before != after or type(before) is not type(after):
            out[member] = schema_change(before, after)
    return out


def _canonical(jsonschema_rs: Any, schema: Any) -> Any:
    if schema is None:
        schema = True
    if isinstance(schema, dict) and "$schema" not in schema:
        schema = {**schema, "$schema": _DEFAULT_DIALECT}
    return jsonschema_rs.canonicalize(schema)


def _too_large(schema: Any) -> bool:
    """Whether `schema` holds more than `MAX_SCHEMA_NODES` JSON values (counted until then)."""
    count = 0
    todo = [schema]
    while todo:
        value = todo.pop()
        count += 1
        if count > MAX_SCHEMA_NODES:
            return True
        if isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return False
