"""Issue 12 memory case: a 1.5 MB page of eight 185 KB `$ref`-chain tools, adapted for every
provider with every result kept, stays under 100 MB resident (measured in a fresh subprocess,
by bounds and counts, never by time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "adapter_memory.py"


def test_ref_chain_page_stays_under_100_mb_resident_with_bounded_notes() -> None:
    """conduit-defined (issue 12 "Done when": the page under 100 MB resident in all; notes
    bounded in count, paths shared)."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, timeout=300
    )
    figures = json.loads(out.stdout)
    assert 1_400_000 <= figures["page_bytes"] <= 1_600_000
    assert figures["results"] == 32
    assert figures["max_notes"] <= 1_001
    assert figures["max_rss_mb"] < 100
