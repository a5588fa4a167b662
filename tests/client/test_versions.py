"""Tests for the protocol-revision helpers (`_versions.py`)."""

from __future__ import annotations

import pytest

from conduit_mcp.client import Error
from conduit_mcp.client._versions import KNOWN_VERSIONS, LATEST, at_least, check_version

# Release order of the revisions, from the spec's changelog; "draft" is the unreleased next one.
ORDER = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "draft"]


def test_known_versions_are_the_released_revisions_oldest_first_then_draft() -> None:
    """conduit-defined: the six revisions with a schema under schema/, in release order."""
    assert list(KNOWN_VERSIONS) == ORDER
    assert LATEST == "2026-07-28"


@pytest.mark.parametrize("version", ORDER)
@pytest.mark.parametrize("other", ORDER)
def test_at_least_follows_release_order(version: str, other: str) -> None:
    """conduit-defined: `at_least(v, o)` is true exactly when v was released at or after o."""
    assert at_least(version, other) is (ORDER.index(version) >= ORDER.index(other))


@pytest.mark.parametrize("version", ["2025-11-26", "2027-01-01", "DRAFT", "", " 2025-11-25", "1.0"])
def test_check_version_rejects_an_unknown_revision(version: str) -> None:
    """conduit-defined: an unknown revision is refused, never ordered by string comparison."""
    with pytest.raises(Error) as info:
        check_version(version)
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "policy",  # the spec allows any version string; refusing it is this library's rule
        "unknown_protocol_version",
        (),
    )
    assert info.value.details["version"] == version


def test_at_least_rejects_an_unknown_revision() -> None:
    """conduit-defined: gating on an unknown revision raises instead of guessing."""
    with pytest.raises(Error) as info:
        at_least("2099-01-01", "2025-06-18")
    assert info.value.reason == "unknown_protocol_version"


@pytest.mark.parametrize("version", [None, 20251125, b"2025-11-25", ["2025-11-25"]])
def test_check_version_rejects_a_non_string_as_a_caller_bug(version: object) -> None:
    """conduit-defined: a non-str version is a caller bug (TypeError), not a peer fault."""
    with pytest.raises(TypeError):
        check_version(version)


def test_at_least_rejects_an_unknown_comparison_revision_as_a_library_bug() -> None:
    """conduit-defined: the second argument is a literal in this library's code."""
    with pytest.raises(ValueError):
        at_least("2025-11-25", "2030-01-01")
