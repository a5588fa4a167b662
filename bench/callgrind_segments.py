"""CPU instructions per segment of one process under callgrind: counts the load cannot move.

A child process marks the end of each segment it measures with `mark()` (`os.sched_yield()`,
which nothing else these processes run calls); `count(args, labels)` runs it under
`valgrind --tool=callgrind --dump-before=sched_yield`, which writes one dump per mark, and returns
each segment's total. The first dump (start-up, imports, the workload, warm-up) is dropped. Much
faster than a process per figure (bench/instructions.py), so a probe can compare many variants.
Instructions are not time (a cache miss costs cycles, not instructions), but two candidates'
counts on the same input compare their work exactly.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def mark() -> None:
    """End the current segment (the child side: one call before the first, one after each)."""
    os.sched_yield()


def count(args: list[str], labels: list[str], env: dict[str, str] | None = None) -> dict[str, int]:
    """Run `args` under callgrind; the instructions of each segment, by `labels` in order.

    Raises:
        SystemExit: valgrind is not on PATH.
        RuntimeError: the child failed, or marked a different number of segments than `labels`.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("callgrind counts need valgrind on PATH (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [
                valgrind,
                "--tool=callgrind",
                "--dump-before=sched_yield",
                f"--callgrind-out-file={out}",
                *args,
            ],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args} failed ({done.returncode}): {done.stderr[-3000:]}")
        parts = sorted(Path(tmp).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = []
        for part in parts:
            found = _TOTAL.search(part.read_text(encoding="utf-8", errors="replace"))
            if found is None:
                raise RuntimeError(f"no total in {part.name}")
            totals.append(int(found.group(1)))
    segments = totals[1:]  # the first: start-up up to the first mark
    if len(segments) != len(labels):
        raise RuntimeError(f"{len(segments)} segments marked for {len(labels)} labels: {labels}")
    return dict(zip(labels, segments, strict=True))
