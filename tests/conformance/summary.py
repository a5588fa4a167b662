"""Print, per spec version, how many spec examples the schema and the generated models accept.

Run by `make generate` after regenerating. Exit status 1 when the two checks disagree on any
example or an accepted example does not round-trip exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conduit_mcp_wire import VERSIONS

from tests.conformance.examples import (
    iter_examples,
    jsonschema_errors,
    model_check,
)


def main() -> int:
    """Print the table; return the exit status."""
    failures = []
    print(f"{'version':<12} {'examples':>8} {'jsonschema':>10} {'model':>6} {'round-trip':>10}")
    for version in VERSIONS:
        total = schema_ok = model_ok = round_trip = 0
        for example in iter_examples(version):
            total += 1
            schema_errors = jsonschema_errors(version, example.definition, example.instance)
            model_errors, dumped = model_check(version, example.definition, example.instance)
            schema_ok += not schema_errors
            model_ok += not model_errors
            round_trip += dumped == example.instance
            if bool(schema_errors) != bool(model_errors):
                failures.append(f"{example.id}: jsonschema {schema_errors} vs model {model_errors}")
            elif dumped is not None and dumped != example.instance:
                failures.append(f"{example.id}: does not round-trip")
        print(f"{version:<12} {total:>8} {schema_ok:>10} {model_ok:>6} {round_trip:>10}")
    for failure in failures:
        print("DISAGREE", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
