"""Session-wide test set-up: every hypothesis test runs under the shared profile.

`tests/property/profiles.py` defines `ci` (derandomized, no example database, no deadline: the
default) and `long` (`HYPOTHESIS_PROFILE=long`). Loading it here makes it the default of every
hypothesis test in the run; `bounded(n)` then sets each test's example count (times 20 in `long`).
`tests/test_suite_rules.py` fails on a `@given` test without `@bounded`.

`make test` runs a short fuzz pass first and sets `CONDUIT_FUZZ_VERDICT` to the file holding its
one-line verdict; the terminal summary repeats it, so the run ends with every result in one place.
It also sets `CONDUIT_MAKE_STARTED` (Unix seconds when make started): the summary then gives the
wall time of the whole target (drift check, lint, fuzz pass and tests), ahead of pytest's counts,
with the load average, and with `CONDUIT_TEST_BUDGET` (seconds; CONTRIBUTING.md "The test
budget") says when the run went over it. Only a line to read, never a failure: wall time on a
shared machine measures the machine as much as the suite.

The suite runs as from an activated venv: this interpreter's `bin/` leads PATH, so the command
lines the CLI and the proxy print name `conduit-mcp` (the program on PATH) as an operator's shell
would; `tests/test_program_name.py` covers a PATH without it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import settings

from tests.property import profiles

settings.load_profile(profiles.ACTIVE)

_VENV_BIN = str(Path(sys.executable).parent)
if os.environ.get("PATH", "").split(os.pathsep)[:1] != [_VENV_BIN]:
    os.environ["PATH"] = os.pathsep.join([_VENV_BIN, os.environ.get("PATH", "")])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Repeat the fuzz pass's verdict (tests/fuzz/run.py --log) when `make test` ran one, and
    the wall time since make started."""
    verdict = os.environ.get("CONDUIT_FUZZ_VERDICT")
    if verdict:
        path = Path(verdict)
        line = path.read_text(encoding="utf-8").strip() if path.is_file() else None
        terminalreporter.write_line(line or f"fuzz: no verdict in {verdict} (did the pass run?)")
    started = os.environ.get("CONDUIT_MAKE_STARTED", "")
    if started.isdigit():
        workers = getattr(terminalreporter.config.option, "numprocesses", None)
        spread = f" ({workers} xdist workers)" if workers else ""
        wall = round(time.time() - int(started))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        line = f"wall time: {wall} s since make started{spread}, load average {load}"
        budget = os.environ.get("CONDUIT_TEST_BUDGET", "")
        if budget.isdigit():
            over = wall > int(budget)
            line += f"; budget {budget} s on 2 idle cores" + (
                ": OVER (the 10 slowest tests above; CONTRIBUTING.md 'The test budget')"
                if over
                else ""
            )
        terminalreporter.write_line(line)
