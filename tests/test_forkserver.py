"""tests/forkserver.py: a forked child shows the tests what a real process of the same command
line shows (`subprocess.Popen` is the oracle): its argv, working directory, environment,
`sys.path[0]`, streams, exit code, and the end a signal gives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forkserver import CONDUIT, Forked, forkable, launched, run, spawn


@pytest.fixture(autouse=True)
def _forking_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the fork server, whatever the run's `CONDUIT_TEST_FORK`."""
    monkeypatch.setenv("CONDUIT_TEST_FORK", "1")


SCRIPT = """
import json, os, sys
print(json.dumps({
    "argv": sys.argv,
    "cwd": os.getcwd(),
    "marker": os.environ.get("FORK_MARKER"),
    "path0": sys.path[0],
    "stdin": sys.stdin.read(),
}), file=sys.stderr)
sys.stdout.write("out\\n")
if sys.argv[1:] == ["sleep"]:
    import time
    print("ready", file=sys.stderr, flush=True)
    time.sleep(60)
raise SystemExit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1] != "sleep" else 0)
"""


def _both(
    tmp_path: Path, *args: str
) -> tuple[Forked | subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    argv = [sys.executable, str(script), *args]
    env = {**os.environ, "FORK_MARKER": "m-1"}
    out = tmp_path / "out.txt"
    with out.open("wb") as sink:
        forked = spawn(argv, stdout=sink, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        real = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
    return forked, real


@pytest.mark.parametrize("code", ["0", "3"])
def test_a_forked_script_sees_and_ends_as_a_real_one(tmp_path: Path, code: str) -> None:
    forked, real = _both(tmp_path, code)
    assert isinstance(forked, Forked)
    assert forked.wait(timeout=60) == real.wait(timeout=60) == int(code)
    assert forked.stderr is not None and real.stderr is not None
    seen, expected = json.loads(forked.stderr.read()), json.loads(real.stderr.read())
    assert seen == expected
    assert expected["marker"] == "m-1" and expected["cwd"] == str(tmp_path)
    assert (tmp_path / "out.txt").read_text() == "out\n"  # flushed at its exit
    forked.stderr.close()
    real.stderr.close()


@pytest.mark.parametrize("code", ["0", "3"])
def test_a_forked_dash_c_program_sees_and_ends_as_a_real_one(tmp_path: Path, code: str) -> None:
    """`python -c CODE ARGS` (the form README.md's and the docs' servers take): argv `-c` then
    the arguments, the working directory first on the path (""), `__main__`, exit code."""
    argv = [sys.executable, "-c", "import sys; print(__name__, file=sys.stderr)" + SCRIPT, code]
    env = {**os.environ, "FORK_MARKER": "m-1"}
    forked = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    assert isinstance(forked, Forked)
    with forked:
        seen = forked.communicate(timeout=60)
    real = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=tmp_path, check=False
    )
    assert forked.returncode == real.returncode == int(code)
    assert seen == (real.stdout, real.stderr)
    name, facts = real.stderr.decode().splitlines()
    assert (json.loads(facts)["argv"], json.loads(facts)["path0"], name) == (
        ["-c", code],
        "",
        "__main__",
    )


def test_a_piped_stdin_reaches_the_child_as_a_real_ones(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    argv = [sys.executable, str(script), "0"]
    seen = []
    for start in (spawn, subprocess.Popen):
        process = start(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdin is not None
        process.stdin.write("é line\n".encode())
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0 and out == b"out\n"
        assert err is not None
        seen.append(json.loads(err)["stdin"])
    assert seen == ["é line\n", "é line\n"]


def test_a_signal_ends_a_forked_child_as_a_real_one(tmp_path: Path) -> None:
    forked, real = _both(tmp_path, "sleep")
    for process in (forked, real):
        assert process.stderr is not None
        while b"ready" not in process.stderr.readline():
            pass
        assert process.poll() is None
        process.terminate()
    assert forked.wait(timeout=60) == real.wait(timeout=60) == -signal.SIGTERM
    forked.send_signal(signal.SIGTERM)  # ended: nothing is sent, as Popen
    for process in (forked, real):
        assert process.stderr is not None
        process.stderr.close()


def test_a_wait_past_its_timeout_raises_as_popen(tmp_path: Path) -> None:
    forked, real = _both(tmp_path, "sleep")
    for process in (forked, real):
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=0.01)
        process.kill()
        assert process.wait(timeout=60) == -signal.SIGKILL
        assert process.stderr is not None
        process.stderr.close()


def test_the_console_script_runs_as_installed(tmp_path: Path) -> None:
    argv = [str(CONDUIT), "proxy", "--no-such-option"]
    forked = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    real = subprocess.run(argv, capture_output=True, check=False)
    assert isinstance(forked, Forked)
    assert forked.wait(timeout=60) == real.returncode == 2  # typer's usage error
    assert forked.stderr is not None and forked.stdout is not None
    assert forked.stderr.read() == real.stderr
    assert forked.stdout.read() == real.stdout
    forked.stderr.close()
    forked.stdout.close()


@pytest.mark.parametrize("text", [False, True])
def test_run_gives_what_subprocess_run_gives(tmp_path: Path, text: bool) -> None:
    """`run` against `subprocess.run(..., capture_output=True)`: input, both streams, the exit
    code; and a console-script command that reads a page from stdin, as installed."""
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    line = "é line\n" if text else "é line\n".encode()
    for argv in ([sys.executable, str(script), "3"], [str(CONDUIT), "inspect", "--json", "-"]):
        page = '{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}'
        given = line if argv[0] == sys.executable else (page if text else page.encode())
        forked = run(argv, input=given, cwd=tmp_path, text=text, timeout=60)
        real = subprocess.run(
            argv, input=given, cwd=tmp_path, text=text, capture_output=True, timeout=60
        )
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            real.returncode,
            real.stdout,
            real.stderr,
        )
        assert forked.args == argv
    assert real.returncode == 0 and json.loads(real.stdout)[0]["tools"][0]["name"] == "a"


def test_run_kills_a_child_past_its_timeout(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    with pytest.raises(subprocess.TimeoutExpired):
        run([sys.executable, str(script), "sleep"], timeout=0.5)


@pytest.mark.parametrize("code", ["0", "3"])
def test_a_launched_command_is_seen_by_its_parent_as_the_real_one(
    tmp_path: Path, code: str
) -> None:
    """`launched`: a parent starting the launcher (as the proxy starts its server) sees what
    starting the command itself shows: the child's argv, working directory, environment,
    stdin, stdout to its end, stderr, and its exit code."""
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    argv = [sys.executable, str(script), code]
    assert launched(argv)[:3] == [sys.executable, "-S", str(Path("tests/forklaunch.py").resolve())]
    env = {**os.environ, "FORK_MARKER": "m-1"}
    seen = []
    for command in (launched(argv), argv):
        done = subprocess.run(
            command, input=b"in\n", capture_output=True, env=env, cwd=tmp_path, timeout=60
        )
        seen.append((done.returncode, done.stdout, json.loads(done.stderr)))
    assert seen[0] == seen[1]
    assert seen[1][0] == int(code) and seen[1][2]["stdin"] == "in\n"


def test_a_signal_to_the_launcher_ends_the_child_as_it_would_end_the_real_one(
    tmp_path: Path,
) -> None:
    script = tmp_path / "child.py"
    script.write_text(SCRIPT, encoding="utf-8")
    argv = [sys.executable, str(script), "sleep"]
    for command in (launched(argv), argv):
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdin is not None and process.stderr is not None
        process.stdin.close()
        while b"ready" not in process.stderr.readline():
            pass
        process.terminate()
        assert process.wait(timeout=60) == -signal.SIGTERM
        assert process.stdout is not None and process.stdout.read() == b"out\n"
        process.stdout.close()
        process.stderr.close()


def test_a_command_the_fork_server_does_not_run_is_launched_as_it_is() -> None:
    assert launched(["node", "server.js"]) == ["node", "server.js"]
    # `python -m` and a bare `python -c` (an error, as Python's own) start as they are.
    for argv in ([sys.executable, "-m", "tests.forkserver"], [sys.executable, "-c"]):
        assert not forkable(argv) and launched(argv) == argv
    assert forkable([sys.executable, "-c", "pass"]) and forkable([str(CONDUIT), "--help"])


def test_forking_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CONDUIT_TEST_FORK", "0")
    script = tmp_path / "child.py"
    script.write_text("pass\n", encoding="utf-8")
    process = spawn([sys.executable, str(script)])
    assert isinstance(process, subprocess.Popen)
    assert process.wait(timeout=60) == 0
