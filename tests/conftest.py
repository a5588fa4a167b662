"""Session-wide test set-up: every hypothesis test runs under the shared profile.

`tests/property/profiles.py` defines `ci` (derandomized, no example database, no deadline: the
default) and `long` (`HYPOTHESIS_PROFILE=long`). Loading it here makes it the default of every
hypothesis test in the run; `bounded(n)` then sets each test's example count (times 20 in `long`).
`tests/test_suite_rules.py` fails on a `@given` test without `@bounded`.
"""

from hypothesis import settings

from tests.property import profiles

settings.load_profile(profiles.ACTIVE)
