"""IntakeWarning: an immutable, hashable, picklable per-tool finding."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from conduit_mcp.client import WARNING_CODES, IntakeWarning


def make() -> IntakeWarning:
    return IntakeWarning("tool_name_charset", ("name",), "m", {"index": 6})


def test_a_warning_carries_its_fields_and_renders_its_path() -> None:
    """conduit-defined."""
    w = make()
    assert (w.code, w.path, w.message, dict(w.details)) == (
        "tool_name_charset",
        ("name",),
        "m",
        {"index": 6},
    )
    assert w.json_path == "$.name"
    assert str(w) == "tool_name_charset at $.name: m"


def test_with_prefix_roots_the_path_in_the_tools_list() -> None:
    """conduit-defined: checks return relative paths; intake prepends ("tools", i)."""
    w = make()
    assert w.with_prefix("tools", 3).path == ("tools", 3, "name")
    assert w.with_prefix("tools", 3).json_path == "$.tools[3].name"
    assert w.path == ("name",)


def test_a_warning_is_immutable_and_does_not_alias_the_details_passed() -> None:
    """conduit-defined."""
    details = {"index": 6}
    w = IntakeWarning("tool_name_length", ["name"], "m", details)  # type: ignore[arg-type]
    details["index"] = 7
    assert w.details["index"] == 6
    assert w.path == ("name",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.code = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        w.details["index"] = 8  # type: ignore[index]


def test_warnings_hash_compare_copy_and_pickle() -> None:
    """conduit-defined: usable in sets and across processes."""
    a, b = make(), make()
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a
    assert IntakeWarning("tool_name_charset", ("name",), "m") != a


def test_an_unknown_code_is_a_bug() -> None:
    """conduit-defined: codes are a closed, public set."""
    assert {"tool_name_length", "tool_name_charset"} <= WARNING_CODES
    with pytest.raises(ValueError):
        IntakeWarning("made_up", (), "m")
