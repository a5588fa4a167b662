"""Hypothesis profiles of the property tests: `quick` (the default), `thorough` and `long`.

Every `@given` test in tests/ takes its settings from `bounded(n)` (tests/test_suite_rules.py
checks); the profile sets how many examples `n` becomes:

- `quick`, the default and what `make test` runs: a quarter of `n`, never fewer than 10 (nor
  more than `n`);
- `thorough`, what `make test-slow` runs (CI runs it after `make test`): `n` itself, the counts
  `make test` ran until 2026-12-02 (issue 33 item 4);
- `long` (`HYPOTHESIS_PROFILE=long make test-slow`): 20 times `n`, randomized, for a search.

`quick` and `thorough` are derandomized without an example database, so a run is the same run
every time. The profile comes from `HYPOTHESIS_PROFILE` and is loaded for the whole run by
tests/conftest.py; any other value fails the run's start (a misspelt name would otherwise run
another profile without a word).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from hypothesis import HealthCheck, settings

#: Health checks that only say a strategy is slow or large, which is the point here.
_QUIET: Final = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]

for _name in ("quick", "thorough"):
    settings.register_profile(
        _name, deadline=None, suppress_health_check=_QUIET, derandomize=True, database=None
    )
settings.register_profile("long", deadline=None, suppress_health_check=_QUIET)

#: The profiles, in the order of how many examples they run.
PROFILES: Final = ("quick", "thorough", "long")
#: How many times more examples the `long` profile runs than `thorough`.
LONG_FACTOR: Final = 20
#: How many times fewer examples `quick` runs than `thorough`, and its floor.
QUICK_DIVISOR: Final = 4
QUICK_FLOOR: Final = 10


def profile_from(environ: Mapping[str, str]) -> str:
    """The profile `HYPOTHESIS_PROFILE` names in `environ`, `quick` when it is unset or empty.

    Raises:
        ValueError: it names none of `PROFILES`.
    """
    name = environ.get("HYPOTHESIS_PROFILE") or "quick"
    if name not in PROFILES:
        raise ValueError(f"HYPOTHESIS_PROFILE={name!r}: not one of {', '.join(PROFILES)}")
    return name


#: The profile in force for this run.
ACTIVE: Final = profile_from(os.environ)


def examples(max_examples: int, profile: str) -> int:
    """How many examples a test bounded at `max_examples` runs under `profile`.

    Raises:
        ValueError: `profile` is none of `PROFILES`.
    """
    if profile == "quick":
        return min(max_examples, max(QUICK_FLOOR, max_examples // QUICK_DIVISOR))
    if profile == "thorough":
        return max_examples
    if profile == "long":
        return max_examples * LONG_FACTOR
    raise ValueError(f"unknown hypothesis profile {profile!r}")


def bounded(max_examples: int, **overrides: Any) -> settings:
    """Settings for one property test: `max_examples` in `thorough`, a quarter of it (at least
    10) in `quick`, 20 times it in `long` (`examples`).

    Raises:
        ValueError: `max_examples` is above 200 (the issue's bound for a test's `thorough` run).
    """
    if max_examples > 200:
        raise ValueError("keep property tests at max_examples <= 200")
    return settings(
        settings.get_profile(ACTIVE),
        max_examples=examples(max_examples, ACTIVE),
        **overrides,
    )
