"""The UTS #39 skeleton and look-alike names (`skeleton`, `lookalike_key`, `find_lookalikes`).

The oracle is ICU 72.1 (Unicode 15.0.0), an independent implementation: its skeletons of 8,328
strings are recorded in tests/fixtures/confusables/icu72_skeletons.json by
make_icu_skeletons.py beside it (PyICU); when PyICU is installed, a sample is asked live too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from conduit_mcp.client import find_lookalikes, lookalike_key, lookalike_relation, skeleton
from conduit_mcp.client._confusables_table import CONFUSABLES_VERSION, PROTOTYPES

ROOT = Path(__file__).resolve().parents[2]
UCD = ROOT / "ucd"
ORACLE = ROOT / "tests" / "fixtures" / "confusables" / "icu72_skeletons.json"

CAFE = "caf\u00e9"
CAFE_NFD = "cafe\u0301"
CAFE_CYRILLIC = "c\u0430f\u00e9"  # U+0430 CYRILLIC SMALL LETTER A
CAFE_SPACE = "caf\u00e9 "


def test_the_data_file_is_the_pinned_unicode_15_confusables() -> None:
    """Provenance (ucd/PINNED.json "security"): the sha256, and the file's own version line."""
    entry = json.loads((UCD / "PINNED.json").read_text("utf-8"))["security"]["confusables.txt"]
    data = (UCD / "confusables.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    lines = data.decode("utf-8").splitlines()
    assert lines[0] == "# confusables.txt"
    assert "# Version: 15.0.0" in lines[:12]
    assert entry["version"] == CONFUSABLES_VERSION == "15.0.0"


def test_the_generator_check_passes() -> None:
    """The table module is what codegen/confusables_table.py writes from ucd/ today."""
    spec = importlib.util.spec_from_file_location(
        "confusables_table", ROOT / "codegen" / "confusables_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["confusables_table"] = module
    spec.loader.exec_module(module)
    expected = (ROOT / "src" / "conduit_mcp" / "client" / "_confusables_table.py").read_text()
    assert module.render() == expected


def test_the_table_has_every_data_line() -> None:
    """One entry per data line of confusables.txt (6,311 in 15.0.0), spot-checked by hand."""
    lines = [
        line
        for line in (UCD / "confusables.txt").read_text("utf-8").splitlines()
        if line.split("#", 1)[0].strip()
    ]
    assert len(PROTOTYPES) == len(lines) == 6311
    assert PROTOTYPES[0x0430] == "a"  # CYRILLIC SMALL LETTER A -> LATIN SMALL LETTER A
    assert PROTOTYPES[0x0031] == "l"  # DIGIT ONE -> LATIN SMALL LETTER L
    assert PROTOTYPES[ord("m")] == "rn"


def test_skeleton_agrees_with_icu_on_the_recorded_sample() -> None:
    """ICU 72.1 `SpoofChecker::getSkeleton` on every source character of confusables.txt, the
    rename-attack names and 2,000 seeded random strings (see make_icu_skeletons.py)."""
    oracle = json.loads(ORACLE.read_text("utf-8"))
    assert oracle["unicode_version"] == "15.0"
    pairs = oracle["pairs"]
    assert len(pairs) == 8328
    assert [(s, k) for s, k in pairs if skeleton(s) != k] == []


def test_skeleton_agrees_with_icu_live_when_pyicu_is_installed() -> None:
    icu = pytest.importorskip("icu")
    if not str(icu.UNICODE_VERSION).startswith("15."):
        pytest.skip(f"PyICU's ICU is Unicode {icu.UNICODE_VERSION}, the data is 15.0.0")
    checker = icu.SpoofChecker()
    for text in (CAFE, CAFE_NFD, CAFE_CYRILLIC, "p\u0430ypal", "rn", "m", "\uff21\U0001d41b"):
        assert skeleton(text) == checker.getSkeleton(0, text), ascii(text)


@pytest.mark.parametrize(
    ("name", "relation"),
    [
        (CAFE_NFD, "canonically equal (NFC)"),
        (CAFE_CYRILLIC, "confusable (UTS #39 skeleton)"),
        (CAFE_SPACE, "equal after trimming whitespace"),
        ("caf\u00e9\u200b", "equal without invisible characters"),
        ("\uff43\uff41\uff46\u00e9", "compatibility equal (NFKC)"),  # fullwidth c, a, f
    ],
)
def test_the_rename_attack_names_look_like_cafe(name: str, relation: str) -> None:
    """Issue examples: café in NFD, with a Cyrillic а, with a trailing space."""
    assert name != CAFE
    assert lookalike_key(name) == lookalike_key(CAFE)
    assert lookalike_relation(name, CAFE) == relation
    assert find_lookalikes([name], [CAFE]) == {name: CAFE}


@pytest.mark.parametrize(
    ("a", "b"),
    [("cafe", CAFE), ("echo", "Echo"), ("read_file", "read_files"), ("add", "and")],
)
def test_different_names_are_not_lookalikes(a: str, b: str) -> None:
    """Accents, case and extra letters are visible differences (no case folding in UTS #39)."""
    assert lookalike_key(a) != lookalike_key(b)
    assert find_lookalikes([a], [b]) == {}
    assert lookalike_relation(a, b) == "not look-alikes"


def test_confusable_ascii_names_share_a_skeleton() -> None:
    """UTS #39: 1, I and l are one prototype; m and rn too."""
    assert skeleton("tool1") == skeleton("toolI") == skeleton("tooll") == "tooll"
    assert skeleton("modern") == skeleton("rnodern")


def test_find_lookalikes_skips_known_names_and_prefers_the_first_known() -> None:
    assert find_lookalikes([CAFE, "tea"], [CAFE]) == {}
    assert find_lookalikes([CAFE_SPACE], [CAFE_NFD, CAFE]) == {CAFE_SPACE: CAFE_NFD}
    assert find_lookalikes([], [CAFE]) == {}


def test_the_skeleton_is_in_nfd() -> None:
    """UTS #39: the skeleton is NFD (a stable form to compare)."""
    for text in (CAFE, "\u1e9b\u0323", "\uac00"):
        assert unicodedata.is_normalized("NFD", skeleton(text))
