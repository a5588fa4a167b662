"""The side-by-side benchmark (`make bench`): a script, not a test suite."""
