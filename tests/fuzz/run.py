"""Coverage-guided fuzzing of the JSON-bytes entry points with atheris (libFuzzer).

    python tests/fuzz/run.py --seconds 60 --target all      # what `make fuzz` runs
    python tests/fuzz/run.py --seconds 20 --target intake_json
    python tests/fuzz/run.py --seconds 30 --target all --log .cache/fuzz/make-test.log --jobs 2

With `--log`, libFuzzer's output goes to that file (not the terminal) and the run prints one
verdict line (targets, seconds, executions, new corpus inputs, crashes), also written to
`<log>.verdict` for the test summary; on a crash the end of that target's output is shown too.
`--jobs N` (with `--log`) runs up to N targets at once, each for its own share of the seconds,
their outputs kept whole and in order in the log. `make test` runs it this way with 2 jobs.

Each target runs in its own process for its share of the time (atheris never returns from
`Fuzz()`), with the seed corpus of `tests/fuzz/seeds.py` copied into a working corpus under
`.cache/fuzz/<target>/` that persists between runs (the fuzzer adds what it learns there). A
crash is written to `tests/fuzz/crashes/<target>-crash-<sha1>` (libFuzzer's naming with our
prefix): commit it, and `tests/fuzz/test_replay.py` replays it on every `make test` from then on.

Exit status: 0 when every target ran clean, 1 when one crashed (or timed out, or ran out of
memory), 2 when atheris is missing (install the `fuzz` extra).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CRASHES = HERE / "crashes"
WORK = ROOT / ".cache" / "fuzz"
# The target names, spelled out so that this process never imports the library (atheris can
# only instrument modules imported after it starts). tests/fuzz/targets.py has the same keys.
TARGET_NAMES = ("parse_json", "intake_json", "tool", "result", "conformance", "cli")


def main(argv: list[str] | None = None) -> int:
    """Run one target (or all, time split evenly); return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="total time budget")
    parser.add_argument("--target", default="all", choices=("all", *TARGET_NAMES))
    parser.add_argument("--log", type=Path, help="libFuzzer output to this file; print a verdict")
    parser.add_argument(
        "--jobs", type=int, default=1, help="with --log: at most this many targets at once"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args, extra = parser.parse_known_args(argv)
    if args.worker:
        return _worker(args.target, extra)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print(
            "fuzz: atheris is not installed (pip install 'conduit-mcp-client[fuzz]')",
            file=sys.stderr,
        )
        return 2
    names = TARGET_NAMES if args.target == "all" else (args.target,)
    share = max(1, args.seconds // len(names))
    log_path: Path | None = args.log
    log: IO[bytes] | None = None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = log_path.open("wb")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"}
    corpora = {name: _corpus(name) for name in names}

    def command(name: str) -> list[str]:
        return [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            "--target",
            name,
            str(corpora[name]),
            f"-max_total_time={share}",
            "-timeout=20",
            "-rss_limit_mb=4096",
            "-max_len=262144",
            f"-artifact_prefix={CRASHES}/{name}-",
            "-print_final_stats=1",
        ]

    def run_to_file(name: str) -> tuple[int, bytes]:
        """One target with its output in a file of its own (targets may run side by side)."""
        assert log_path is not None
        part = log_path.with_name(f"{log_path.name}.{name}")
        with part.open("wb") as out:
            code = subprocess.run(
                command(name), cwd=ROOT, env=env, check=False, stdout=out, stderr=subprocess.STDOUT
            ).returncode
        output = part.read_bytes()
        part.unlink()
        return code, output

    failed, runs, added = [], 0, 0
    if log is None:
        for name in names:
            print(f"fuzz: {name} for {share} s (corpus {corpora[name]})", flush=True)
            if subprocess.run(command(name), cwd=ROOT, env=env, check=False).returncode != 0:
                failed.append(name)
    else:
        # Each target still gets its own `share` of seconds: `--jobs` only lets up to that many
        # run at once (make test: 2, one a core, so the pass does not leave a core idle).
        try:
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                done = list(pool.map(run_to_file, names))
            for name, (code, output) in zip(names, done, strict=True):
                log.write(f"=== fuzz: {name} for {share} s (corpus {corpora[name]})\n".encode())
                log.write(output)
                stats = _final_stats(output)
                runs += stats.get("number_of_executed_units", 0)
                added += stats.get("new_units_added", 0)
                if code != 0:
                    failed.append(name)
                    tail = output.decode("utf-8", "replace").splitlines()[-30:]
                    print(f"fuzz: {name} failed; the end of its output:", file=sys.stderr)
                    print("\n".join(tail), file=sys.stderr)
        finally:
            log.close()
    if log_path is not None:
        verdict = (
            f"fuzz: {len(names)} target(s) x {share} s, {runs:,} executions, {added:,} new"
            f" corpus inputs, {'crash in ' + ', '.join(failed) if failed else 'no crash'}"
            f" (libFuzzer log: {_shown(log_path)})"
        )
        print(verdict, flush=True)
        log_path.with_name(log_path.name + ".verdict").write_text(verdict + "\n", "utf-8")
    if failed:
        print(
            f"fuzz: crash in {', '.join(failed)}; the input is in {CRASHES} and "
            "tests/fuzz/test_replay.py now replays it: fix the cause, keep the file",
            file=sys.stderr,
        )
        return 1
    return 0


def _final_stats(output: bytes) -> dict[str, int]:
    """libFuzzer's `-print_final_stats=1` lines (`stat::name: value`), the integers only."""
    found = re.findall(rb"^stat::(\w+):\s+(\d+)\s*$", output, re.MULTILINE)
    return {key.decode(): int(value) for key, value in found}


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _corpus(name: str) -> Path:
    """The working corpus of a target, topped up with every current seed (by content hash)."""
    sys.path.insert(0, str(ROOT))
    from tests.fuzz.seeds import seeds  # no library import: seeds reads files only

    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    for _, data in seeds(name):
        path = folder / hashlib.sha1(data).hexdigest()  # a file name, not security
        if not path.exists():
            path.write_bytes(data)
    return folder


def _worker(name: str, libfuzzer_args: list[str]) -> int:
    import atheris

    with atheris.instrument_imports(include=["conduit_mcp"]):
        from tests.fuzz.targets import TARGETS

    atheris.Setup([sys.argv[0], *libfuzzer_args], TARGETS[name])
    atheris.Fuzz()
    return 0  # pragma: no cover - Fuzz() exits the process


if __name__ == "__main__":
    sys.exit(main())
