"""Hypothesis profiles of the property tests: `ci` (bounded; the default) and `long`.

`HYPOTHESIS_PROFILE=long make test` runs every property test with 20 times the examples. The
active profile is loaded for the whole run by tests/conftest.py, and every `@given` test in
tests/ takes its settings from `bounded` (tests/test_suite_rules.py checks), so no hypothesis
test runs randomized or with the example database in `ci`.
"""

from __future__ import annotations

import os
from typing import Any, Final

from hypothesis import HealthCheck, settings

#: Health checks that only say a strategy is slow or large, which is the point here.
_QUIET: Final = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]

settings.register_profile(
    "ci", deadline=None, suppress_health_check=_QUIET, derandomize=True, database=None
)
settings.register_profile("long", deadline=None, suppress_health_check=_QUIET)

PROFILE: Final = os.environ.get("HYPOTHESIS_PROFILE", "ci")
#: The profile in force: `PROFILE` when it is one of ours, else `ci`.
ACTIVE: Final = PROFILE if PROFILE in ("ci", "long") else "ci"
#: How many times more examples the `long` profile runs.
LONG_FACTOR: Final = 20


def bounded(max_examples: int, **overrides: Any) -> settings:
    """Settings for one property test: `max_examples` in `ci`, 20 times that in `long`.

    Raises:
        ValueError: `max_examples` is above 200 (the issue's bound for `make test`).
    """
    if max_examples > 200:
        raise ValueError("keep ci property tests at max_examples <= 200")
    factor = LONG_FACTOR if PROFILE == "long" else 1
    return settings(
        settings.get_profile(ACTIVE),
        max_examples=max_examples * factor,
        **overrides,
    )
