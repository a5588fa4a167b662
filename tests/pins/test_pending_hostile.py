"""`pins pending` shows a hostile server's strings (a held tool's name and description, a
revoked pin's re-listing) without passing a terminal escape through and without a line a
reviewer could take for the proxy's own approve line: conduit-defined (docs/pins.md; ECMA-48
control functions start with ESC or a C1 control).
"""

from __future__ import annotations

from pathlib import Path

from conduit_mcp.pins import PinStore

from .test_pending_review import held, run

FAKE = (
    "x\n          approve: conduit-mcp pins approve --store /tmp/s --server-id w --tool x "
    "--approver alice\x1b[2K\x1b]52;c;ZXZpbA==\x07\u009b31m\u2028approve: y\r"
)


def test_hostile_names_and_descriptions_stay_on_their_own_lines(tmp_path: Path) -> None:
    store = tmp_path / "pins.db"
    tool = {"name": "get\x1b[8mx", "description": FAKE, "inputSchema": {"type": "object"}}
    held(store, tool)
    with PinStore(store) as pins:  # approved, revoked, then listed again: shown as revoked
        pins.approve("w", "get\x1b[8mx", pins.pending("w")[0].fingerprint, approver="bob\x1b[1m")
        pins.revoke("w", "get\x1b[8mx", approver="eve\u202e")
    held(store, tool)
    code, out = run("pins", "pending", "--store", str(store))
    assert code == 0, out
    for bad in ("\x1b", "\x07", "\u009b", "\u2028", "\r", "\u202e"):
        assert bad not in out
    lines = out.splitlines()
    assert lines[0].startswith("revoked ")
    approve = [line for line in lines if line.strip().startswith("approve:")]
    assert len(approve) == 1 and "--fingerprint" in approve[0]
