"""Rules every test file follows, checked over the source of tests/ (issue 15, item 8)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

#: One worker runs this module, so tests/ is parsed once per run (`_trees`), not once a worker.
pytestmark = pytest.mark.xdist_group("suite-rules")

TESTS = Path(__file__).resolve().parent


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


@functools.cache
def _trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Every Python file under tests/, parsed once for all the rules here."""
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted(TESTS.rglob("*.py"))
    )


def _functions() -> list[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((path, node))
    return found


def test_a_grouped_test_carries_its_group_in_a_loadgroup_run(
    request: pytest.FixtureRequest,
) -> None:
    """conduit-defined: under `--dist loadgroup` (make test) a test of an `xdist_group` carries
    `@group` in its node id, the only thing xdist's scheduler groups by (pytest 9.2 broke
    xdist 3.8's own suffix; tests/conftest.py sets it); without loadgroup the id is as written."""
    grouped = request.node.nodeid.endswith("::" + request.node.name + "@suite-rules")
    assert grouped == bool(request.config.getoption("loadgroup", default=False))


def test_every_hypothesis_test_takes_its_settings_from_the_shared_profiles() -> None:
    """`@given` goes with `@bounded(n)` (tests/property/profiles.py), never a bare `@settings`:
    derandomized without a database in `quick` and `thorough`, 20 times the examples in
    `long`."""
    offenders, checked = [], 0
    for path, function in _functions():
        names = [_decorator_name(d) for d in function.decorator_list]
        checked += "given" in names
        if "given" in names and ("bounded" not in names or "settings" in names):
            offenders.append(f"{path.relative_to(TESTS)}::{function.name}")
    assert offenders == []
    assert checked >= 50  # the scan sees the property tests (57 when this was written)


def test_the_shared_profile_is_the_default_of_the_whole_run() -> None:
    """tests/conftest.py loaded it: a hypothesis test anywhere is derandomized, no database."""
    from hypothesis import settings

    from tests.property import profiles

    if profiles.ACTIVE in ("quick", "thorough"):
        assert settings.default.derandomize is True
        assert settings.default.database is None
    assert settings.default.deadline is None


def test_each_profile_runs_the_examples_its_rule_gives() -> None:
    """conduit-defined (tests/property/profiles.py): `quick` a quarter, floor 10, never more
    than asked; `thorough` as asked; `long` 20 times; an unknown profile is refused."""
    from tests.property.profiles import examples, profile_from

    assert [examples(n, "quick") for n in (1, 10, 20, 30, 60, 100, 150, 200)] == [
        1,
        10,
        10,
        10,
        15,
        25,
        37,
        50,
    ]
    assert [examples(n, "thorough") for n in (1, 30, 200)] == [1, 30, 200]
    assert [examples(n, "long") for n in (1, 30, 200)] == [20, 600, 4000]
    with pytest.raises(ValueError, match="unknown hypothesis profile 'ci'"):
        examples(30, "ci")
    assert profile_from({}) == profile_from({"HYPOTHESIS_PROFILE": ""}) == "quick"
    assert profile_from({"HYPOTHESIS_PROFILE": "thorough"}) == "thorough"
    with pytest.raises(ValueError, match="HYPOTHESIS_PROFILE='thorugh': not one of"):
        profile_from({"HYPOTHESIS_PROFILE": "thorugh"})


def test_a_bounded_test_runs_the_active_profiles_count() -> None:
    """conduit-defined: `bounded(n)` hands hypothesis the count `examples` gives for the
    profile in force, on top of that profile's own settings."""
    from tests.property import profiles

    chosen = profiles.bounded(200)
    assert chosen.max_examples == profiles.examples(200, profiles.ACTIVE)
    assert chosen.derandomize is (profiles.ACTIVE != "long")
    with pytest.raises(ValueError, match="max_examples <= 200"):
        profiles.bounded(201)


def test_no_test_file_reads_the_clock_or_sleeps() -> None:
    """No wall-clock assertions and no sleeps in tests (speed goes in bench/ and tests/limits,
    which count operations): a `test_*.py` never calls `time.perf_counter`, `time.monotonic`,
    `time.time` or `time.sleep`."""
    clocks = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "sleep"}
    offenders = []
    for path, tree in _trees():
        if not path.name.startswith("test_"):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in clocks
                and isinstance(node.value, ast.Name)
                and node.value.id == "time"
            ):
                offenders.append(f"{path.relative_to(TESTS)}:{node.lineno} time.{node.attr}")
    assert offenders == []
