"""Tests for the protocol-revision helpers (`_versions.py`)."""

from __future__ import annotations

import pytest

from conduit_mcp.client import Error
from conduit_mcp.client._versions import KNOWN_VERSIONS, LATEST, at_least, check_version
from tests.spec_facts import release_key

# The revisions with a schema under schema/ when this was written, in release order (the spec's
# changelog); "draft" is the unreleased next one. A later bump adds dated revisions after them.
ORDER = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "draft"]


def test_known_versions_are_the_released_revisions_oldest_first_then_draft() -> None:
    """conduit-defined: every revision with a schema under schema/, in release order (dates
    oldest first, draft last); LATEST the newest date; none of ORDER lost."""
    assert list(KNOWN_VERSIONS) == sorted(KNOWN_VERSIONS, key=release_key)
    assert [v for v in KNOWN_VERSIONS if v in ORDER] == ORDER
    assert KNOWN_VERSIONS[-1] == "draft"
    assert LATEST == KNOWN_VERSIONS[-2] and LATEST >= "2026-07-28"


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
@pytest.mark.parametrize("other", KNOWN_VERSIONS)
def test_at_least_follows_release_order(version: str, other: str) -> None:
    """Spec-mandated (basic/versioning: revisions are dates): `at_least(v, o)` is true exactly
    when v was released at or after o (draft after every date)."""
    assert at_least(version, other) is (release_key(version) >= release_key(other))


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
