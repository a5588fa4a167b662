"""Issue 12 memory case: a 1.5 MB page of eight 185 KB `$ref`-chain tools. Every Gemini
declaration of the page kept stays under 100 MB resident, and each adapter's call retains its
declaration plus a bounded amount per note (measured in a fresh subprocess with tracemalloc and
getrusage, by bounds and counts, never by time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "adapter_memory.py"
#: Bytes a call may retain beyond its declaration: a fixed part (the AdaptedTool, small
#: tuples) and a bounded part per note (the note, its detail, its share of the path links).
FIXED = 16 * 1024
PER_NOTE = 4 * 1024


@pytest.mark.slow  # a resident-memory run in a child process
def test_ref_chain_page_stays_under_100_mb_resident_with_bounded_notes() -> None:
    """conduit-defined (issue 12 "Done when": the page under 100 MB resident in all; notes
    bounded in count, paths shared)."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, timeout=300
    )
    figures = json.loads(out.stdout)
    assert 1_400_000 <= figures["page_bytes"] <= 1_600_000
    assert figures["kept"] == 8
    assert figures["max_rss_mb"] < 100
    for name, count in figures["notes"].items():
        assert count >= 1_000, name  # the deep tool gives every adapter deep notes
    for name, extra in figures["extra_bytes"].items():
        # Stored whole, each of these notes' paths would be 3,000-5,000 keys (24-40 KB).
        assert extra <= FIXED + PER_NOTE * figures["notes"][name], name
