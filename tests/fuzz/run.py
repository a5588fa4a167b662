"""Coverage-guided fuzzing of the JSON-bytes entry points with atheris (libFuzzer).

    python tests/fuzz/run.py --seconds 60 --target all      # what `make fuzz` runs
    python tests/fuzz/run.py --seconds 20 --target intake_json

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
import subprocess
import sys
from pathlib import Path

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
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args, extra = parser.parse_known_args(argv)
    if args.worker:
        return _worker(args.target, extra)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("fuzz: atheris is not installed (pip install 'conduit-mcp[fuzz]')", file=sys.stderr)
        return 2
    names = TARGET_NAMES if args.target == "all" else (args.target,)
    share = max(1, args.seconds // len(names))
    failed = []
    for name in names:
        corpus = _corpus(name)
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            "--target",
            name,
            str(corpus),
            f"-max_total_time={share}",
            "-timeout=20",
            "-rss_limit_mb=4096",
            "-max_len=262144",
            f"-artifact_prefix={CRASHES}/{name}-",
            "-print_final_stats=1",
        ]
        print(f"fuzz: {name} for {share} s (corpus {corpus})", flush=True)
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"}
        if subprocess.run(command, cwd=ROOT, env=env, check=False).returncode != 0:
            failed.append(name)
    if failed:
        print(
            f"fuzz: crash in {', '.join(failed)}; the input is in {CRASHES} and "
            "tests/fuzz/test_replay.py now replays it: fix the cause, keep the file",
            file=sys.stderr,
        )
        return 1
    return 0


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
