"""Every intake outcome on the project's own inputs, as one digest per input and spec version.

`python -m tests.client.intake_outcomes` records the digests into
tests/fixtures/intake_reference.json (`{version: {input: digest}}`); `--add` records only what
the record lacks (a new version's digests, a new input's at every version) and changes none,
which is what `make bump` runs, so a bump commit adds digests and the old ones still check the
old versions. `test_intake_one_pass.py` compares the code under test with that record. The
record was made with the intake as it stood before the one-pass rewrite (one serialization per
tool, the per-tool memo), so the test proves the rewrite changed no verdict, no warning (order,
path, message, details), no fingerprint and no error on: every corpus file, every handed case,
every spec example, every fuzz regression, every captured tool alone, and the bench workload's
1,000 tools (shuffled member order), at every protocol version and on both transports, first
sight and seen again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conduit_mcp.client import KNOWN_VERSIONS, Error, Intake, intake_json

RECORD = Path(__file__).resolve().parents[1] / "fixtures" / "intake_reference.json"
TRANSPORTS = ("stdio", "streamable-http")


def inputs() -> list[tuple[str, bytes]]:
    """(name, JSON bytes) of every input: the fuzz seeds of the `tool` target (corpus files,
    cases, spec examples, single captured tools, fuzz regressions) and the bench page."""
    from bench import workload
    from tests.fuzz.seeds import seeds

    found = list(seeds("tool"))
    found.append(("bench/workload.py#page-1000", workload.page_bytes(workload.tools(1000))))
    return found


def outcome(data: bytes, version: str, transport: str) -> Any:
    """Everything `intake_json` says about one page, as plain JSON-able data."""
    try:
        got = intake_json("s", data, transport=transport, protocol_version=version)  # type: ignore[arg-type]
    except Error as exc:
        return ["error", exc.kind, exc.reason, list(exc.path), exc.message, _plain(exc.details)]
    except (TypeError, ValueError) as exc:
        return ["exception", type(exc).__name__]
    return _intake(got)


def _intake(got: Intake) -> Any:
    return {
        "tools": [[t.server_id, t.name, t.fingerprint] for t in got.tools],
        "rejected": [
            [r.index, r.name, r.kind, r.reason, list(r.path), r.message] for r in got.rejected
        ],
        "warnings": [
            [x.code, list(x.path), x.message, _plain(dict(x.details))] for x in got.warnings
        ],
        "page": [got.next_cursor, got.ttl_ms, got.cache_scope, got.trusted],
    }


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr, sort_keys=True))


def digest(data: bytes, version: str) -> str:
    """One digest over the outcomes of `data` at one version, on both transports."""
    every = [outcome(data, version, t) for t in TRANSPORTS]
    text = json.dumps(every, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def record(existing: dict[str, dict[str, str]] | None = None) -> tuple[dict[str, Any], int]:
    """{version: {input name: digest}} over `KNOWN_VERSIONS` x `inputs()`, keeping every digest
    of `existing` as it is; returns it and how many digests were added."""
    out: dict[str, dict[str, str]] = {v: dict((existing or {}).get(v, {})) for v in KNOWN_VERSIONS}
    added = 0
    for name, data in inputs():
        for version in KNOWN_VERSIONS:
            if name not in out[version]:
                out[version][name] = digest(data, version)
                added += 1
    return out, added


def write(record_: dict[str, Any]) -> None:
    """Write the record in its layout (one digest a line, sorted)."""
    RECORD.write_text(json.dumps(record_, indent=0, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--add"]:
        old = json.loads(RECORD.read_text(encoding="utf-8"))
        new, count = record(old)
        write(new)
        print(f"{RECORD.relative_to(RECORD.parents[2])}: {count} digests added, none changed")
    else:
        new, count = record()
        write(new)
        print(f"wrote {RECORD} ({count} digests)")
