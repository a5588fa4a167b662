"""Session-wide test set-up: every hypothesis test runs under the shared profile.

`tests/property/profiles.py` defines `quick` (the default, `make test`), `thorough` (`make
test-slow`; both derandomized, no example database, no deadline) and `long`, chosen by
`HYPOTHESIS_PROFILE`. Loading it here makes it the default of every hypothesis test in the run;
`bounded(n)` then sets each test's example count (n/4, at least 10, in `quick`; n in `thorough`;
20n in `long`). `tests/test_suite_rules.py` fails on a `@given` test without `@bounded`.

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
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.property import profiles

settings.load_profile(profiles.ACTIVE)

_VENV_BIN = str(Path(sys.executable).parent)
if os.environ.get("PATH", "").split(os.pathsep)[:1] != [_VENV_BIN]:
    os.environ["PATH"] = os.pathsep.join([_VENV_BIN, os.environ.get("PATH", "")])


def xdist_group_suffix(item: pytest.Item) -> str:
    """The `@name` xdist's `--dist loadgroup` appends to the node id of a test in an
    `xdist_group` (several groups: their sorted names joined by `_`), or "" for none."""
    names = sorted(
        {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
    )
    return "@" + "_".join(names) if names else ""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make `--dist loadgroup` group again: pytest 9.2 computes `Item.nodeid` from `_id`, so
    xdist 3.8's `item._nodeid = nodeid@group` (xdist/remote.py) no longer reaches the scheduler
    and every test of a group went to any worker; each worker holding one made the group's
    module fixture again (the official suite's eight runs, three times). This sets the same
    suffix through `_id`, once (a later xdist that sets it itself finds it there);
    tests/test_suite_rules.py checks a grouped test's id in a loadgroup run."""
    if not config.getoption("loadgroup", default=False):
        return
    from _pytest.nodeid import NodeId

    for item in items:
        suffix = xdist_group_suffix(item)
        if suffix and not item.nodeid.endswith(suffix):
            # The last name carries the parameters and the suffix: NodeId's own string form
            # then ends "[params]@group" however it is rebuilt, as xdist's scheduler expects.
            rest = item.nodeid.partition("::")[2]
            item._id = NodeId(path=item._id.path, names=(rest + suffix,))


def pytest_configure(config: pytest.Config) -> None:
    """With `CPU_PROFILE_DIR` set, record each test's CPU there (tests/cpu_profile.py)."""
    if os.environ.get("CPU_PROFILE_DIR"):
        from tests import cpu_profile

        config.pluginmanager.register(cpu_profile, "conduit-cpu-profile")


@pytest.fixture
def forked_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes a test starts for what they serve or do, forked from this worker's warm
    interpreter (tests/forkserver.py, checked against real processes in
    tests/test_forkserver.py) instead of cold starts of 1.5-2 s of CPU each (`import mcp`):
    the servers the SDK's `stdio_client` starts (`python -c CODE`, `python SCRIPT.py`, also
    under openai-agents, agent-framework, fastmcp), through `forkserver.launched`; and
    `subprocess.run(argv, capture_output=True[, text, check])` of such a command line. The
    test's code runs as written; any other call goes to the real function. Not for a test of
    a start, an import or a process's own streams (CONTRIBUTING.md "The test budget")."""
    from mcp.client import stdio

    from tests import forkserver

    real_run, real_create = subprocess.run, stdio._create_platform_compatible_process

    def run(args: Any, *rest: Any, **options: Any) -> subprocess.CompletedProcess[Any]:
        argv = list(args) if isinstance(args, list | tuple) else None
        plain = not rest and set(options) <= {"capture_output", "text", "check"}
        if argv is None or not plain or not options.get("capture_output"):
            return real_run(args, *rest, **options)
        if not forkserver.forkable(argv):
            return real_run(args, *rest, **options)
        done = forkserver.run(argv, text=bool(options.get("text")))
        if options.get("check"):
            done.check_returncode()
        return done

    async def create(command: str, args: list[str], *rest: Any, **options: Any) -> Any:
        argv = forkserver.launched([command, *args])
        return await real_create(argv[0], argv[1:], *rest, **options)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(stdio, "_create_platform_compatible_process", create)


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its children waited for (the xdist workers and
    what they waited for), in seconds: a figure the machine's load moves far less than wall."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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
        line += f"; pytest's CPU {_cpu_seconds():.0f} s (its own and every process it waited for)"
        budget = os.environ.get("CONDUIT_TEST_BUDGET", "")
        if budget.isdigit():
            over = wall > int(budget)
            line += f"; budget {budget} s on 2 idle cores" + (
                ": OVER (the 10 slowest tests above; CONTRIBUTING.md 'The test budget')"
                if over
                else ""
            )
        terminalreporter.write_line(line)
