"""Print, per spec version, how many spec examples the schema and the generated models accept.

Run by `make generate` after regenerating. Columns: examples; accepted by jsonschema (the official
schema); accepted by the generated model (strict); round-trip (read by wire names, dumped with
`by_alias=True`, unchanged); by-name (dumped by attribute names, built again by keyword from
those, dumped by wire names, unchanged). Exit status 1 when the two checks disagree on any
example or an accepted example does not come back exactly either way. An examples folder that
names no definition of its version's schema (a renamed definition's old folder, a typo) is a
warning on stderr naming the folder and the pointer; folders of definitions outside the
generated models are counted in one note per version (they are not checked here).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conduit_mcp_wire import VERSIONS

from tests.conformance.examples import (
    by_name_check,
    iter_examples,
    jsonschema_errors,
    model_check,
    unmodelled_folders,
)


def main() -> int:
    """Print the table; return the exit status."""
    failures = []
    print(
        f"{'version':<12} {'examples':>8} {'jsonschema':>10} {'model':>6} {'round-trip':>10}"
        f" {'by-name':>8}"
    )
    for version in VERSIONS:
        total = schema_ok = model_ok = round_trip = by_name = 0
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
            if dumped is not None:
                rebuilt = by_name_check(version, example.definition, example.instance)
                by_name += rebuilt == example.instance
                if rebuilt != example.instance:
                    failures.append(f"{example.id}: construction by attribute names differs")
        print(
            f"{version:<12} {total:>8} {schema_ok:>10} {model_ok:>6} {round_trip:>10}"
            f" {by_name:>8}"
        )
    for version in VERSIONS:
        missing, outside = unmodelled_folders(version)
        for folder, pointer, count in missing:
            print(
                f"warning: {folder}/: {pointer}: no such definition in"
                f" schema/{version}/schema.json; its {count} examples are not checked",
                file=sys.stderr,
            )
        if outside:
            print(
                f"note: {version}: {len(outside)} example folders name definitions outside the"
                " generated models (not checked here)"
            )
    for failure in failures:
        print("DISAGREE", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
