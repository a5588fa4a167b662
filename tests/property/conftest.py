"""Registers the `ci` and `long` hypothesis profiles (see `profiles.py`)."""

from tests.property import profiles  # noqa: F401  (registers the profiles on import)
