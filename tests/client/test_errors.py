"""Error: fields, kinds, reason codes and path rendering."""

from __future__ import annotations

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
