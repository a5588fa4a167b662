"""Error: fields, kinds, reason codes and path rendering."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from conduit_mcp.client import REASONS, Error


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        pytest.param((), "$", id="root"),
        pytest.param(("tools", 3, "inputSchema"), "$.tools[3].inputSchema", id="plain"),
        pytest.param(("properties", "x-mcp-header"), '$.properties["x-mcp-header"]', id="dash"),
        pytest.param(("_meta", "io.mcp/x"), '$._meta["io.mcp/x"]', id="slash-and-dot"),
        pytest.param(("a", ""), '$.a[""]', id="empty-key"),
        pytest.param(('q"uote',), '$["q\\"uote"]', id="quote-escaped"),
        pytest.param(("1",), '$["1"]', id="digit-key-is-a-string"),
    ],
)
def test_json_path_quotes_keys_that_are_not_identifiers(path: tuple, rendered: str) -> None:
    """conduit-defined: `$.tools[3].inputSchema`, odd keys quoted with JSON escaping."""
    assert Error("protocol", "invalid_tool", "m", path=path).json_path == rendered


def test_error_carries_its_fields() -> None:
    """conduit-defined."""
    err = Error("policy", "limit_exceeded", "too deep", path=("a", 0), details={"limit": 5})
    assert (err.kind, err.reason, err.message, err.path, err.details) == (
        "policy",
        "limit_exceeded",
        "too deep",
        ("a", 0),
        {"limit": 5},
    )
    assert str(err) == "policy/limit_exceeded at $.a[0]: too deep"
    assert isinstance(err, Exception)


def test_with_prefix_builds_paths_by_descent() -> None:
    """conduit-defined: checks return relative paths; callers prepend theirs."""
    err = Error("protocol", "invalid_tool", "m", path=("name",))
    assert err.with_prefix("tools", 2).path == ("tools", 2, "name")
    assert err.path == ("name",)


def test_unknown_kind_or_reason_is_a_bug_not_an_error() -> None:
    """conduit-defined: reason codes are a closed, public set."""
    with pytest.raises(ValueError):
        Error("server", "invalid_tool", "m")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Error("protocol", "made_up_reason", "m")


def test_reason_codes_are_snake_case() -> None:
    """conduit-defined: reasons are stable snake_case codes."""
    assert all(r.replace("_", "").isalnum() and r == r.lower() for r in REASONS)


# -- issue 15 item 1: a reason implies its kind ---------------------------------------------

#: Each reason's kind, worked out from `Error`'s kind definitions: "protocol" when the peer sent
#: something the spec does not allow (or a value that is not JSON), "policy" when a local rule
#: or limit refused it. Written out here, not read from REASONS, so a change shows.
EXPECTED_KINDS = {
    "invalid_tool": "protocol",
    "invalid_tool_result": "protocol",
    "schema_violation": "protocol",
    "unknown_protocol_version": "policy",
    "invalid_tools_list": "protocol",
    "duplicate_tool_name": "protocol",
    "x_mcp_header_invalid_name": "protocol",
    "x_mcp_header_duplicate": "protocol",
    "x_mcp_header_type": "protocol",
    "x_mcp_header_unreachable": "protocol",
    "header_value_unencodable": "policy",
    "invalid_result_type": "protocol",
    "unsupported_schema_dialect": "protocol",
    "limit_exceeded": "policy",
    "invalid_json": "protocol",
    "unmapped_tool_name": "policy",
}

SRC = Path(__file__).resolve().parents[2] / "src"


def test_reasons_map_each_code_to_its_kind_read_only() -> None:
    """conduit-defined: REASONS is a read-only reason -> kind table; `in` works as on a set."""
    assert dict(REASONS) == EXPECTED_KINDS
    assert "limit_exceeded" in REASONS and "made_up_reason" not in REASONS
    with pytest.raises(TypeError):
        REASONS["invalid_tool"] = "policy"  # type: ignore[index]


@pytest.mark.parametrize("reason", sorted(EXPECTED_KINDS))
def test_error_refuses_a_reason_with_another_kind(reason: str) -> None:
    """conduit-defined: constructing an Error whose kind is not its reason's kind is a bug."""
    kind = EXPECTED_KINDS[reason]
    assert Error(kind, reason, "m").kind == kind  # type: ignore[arg-type]
    for other in {"protocol", "transport", "policy"} - {kind}:
        with pytest.raises(ValueError, match=reason):
            Error(other, reason, "m")  # type: ignore[arg-type]


def _raise_sites() -> list[tuple[str, int, str, str | None]]:
    """Every `Error(kind, reason, ...)` and `type_error(reason, ...)` call in src/, by ast.

    Returns (file, line, reason, kind or None when the helper fixes the kind).
    """
    sites: list[tuple[str, int, str, str | None]] = []
    for file in sorted(SRC.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            where = f"{file.relative_to(SRC)}:{node.lineno}"
            name = node.func.id
            if name == "Error":
                args = node.args[:2]
                if file.name == "_errors.py" and not all(isinstance(a, ast.Constant) for a in args):
                    continue  # with_prefix / unpickling copy an existing Error's fields
                assert len(args) == 2 and all(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args
                ), f"{where}: Error(kind, reason, ...) takes two string literals"
                kind, reason = (a.value for a in args)  # type: ignore[attr-defined]
                sites.append((where, node.lineno, reason, kind))
            elif name == "type_error":
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{where}: type_error takes a literal"
                sites.append((where, node.lineno, first.value, None))
    return sites


def test_every_raise_site_in_src_uses_its_reasons_kind() -> None:
    """conduit-defined: an ast scan of src/; no reason raised with another kind."""
    sites = _raise_sites()
    assert sites, "the scan found no raise sites"
    wrong = [
        (where, reason, kind)
        for where, _, reason, kind in sites
        if reason not in REASONS or (kind if kind is not None else "protocol") != REASONS[reason]
    ]
    assert wrong == []


def test_every_listed_reason_is_raised_somewhere_in_src() -> None:
    """conduit-defined: an ast scan of src/; no reason listed but never raised."""
    raised = {reason for _, _, reason, _ in _raise_sites()}
    assert set(REASONS) - raised == set()


def test_details_are_read_only_and_a_copy() -> None:
    """conduit-defined: like IntakeWarning.details, a caller's dict cannot reach in later."""
    given = {"limit": 5}
    err = Error("policy", "limit_exceeded", "m", details=given)
    given["limit"] = 6
    assert err.details == {"limit": 5}
    with pytest.raises(TypeError):
        err.details["limit"] = 7  # type: ignore[index]
    again = pickle.loads(pickle.dumps(err))
    assert (again.kind, again.reason, again.path, dict(again.details)) == (
        "policy",
        "limit_exceeded",
        (),
        {"limit": 5},
    )
    assert err.with_prefix("a").details == {"limit": 5}
