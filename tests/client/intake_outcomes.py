"""Every intake outcome on the project's own inputs, as one digest per input.

`python -m tests.client.intake_outcomes` records the digests into
tests/fixtures/intake_reference.json; `test_intake_one_pass.py` compares the code under test
with that record. The record was made with the intake as it stood before the one-pass rewrite
(one serialization per tool, the per-tool memo), so the test proves the rewrite changed no
verdict, no warning (order, path, message, details), no fingerprint and no error on: every
corpus file, every handed case, every spec example, every fuzz regression, every captured tool
alone, and the bench workload's 1,000 tools (shuffled member order), at every protocol version
and on both transports, first sight and seen again.
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


def digest(data: bytes) -> str:
    """One digest over the outcomes of `data` at every version and transport."""
    every = [outcome(data, v, t) for v in KNOWN_VERSIONS for t in TRANSPORTS]
    text = json.dumps(every, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def record() -> dict[str, str]:
    """{input name: digest} over `inputs()`."""
    return {name: digest(data) for name, data in inputs()}


if __name__ == "__main__":
    RECORD.write_text(json.dumps(record(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {RECORD}")
