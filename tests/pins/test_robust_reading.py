"""Reading what a store holds, however it got there: sqlite's dynamic typing lets any value into
any column, so every row is shown or refused with one line (exit code 2), never a traceback;
and a sqlite file that is not a pin store is refused by every command that must not create
one, with nothing written to it."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.client import Tool
from conduit_mcp.pins import PinStore

PAGE = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tools" / "server-everything"
EVERYTHING = PAGE / "tools-list--none-client-caps.json"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def a_store(path: Path) -> None:
    with PinStore(path) as pins:
        tool = Tool.from_wire("s", {"name": "t", "inputSchema": {"type": "object"}})
        pins.approve("s", tool, approver="alice")


# Values sqlite accepts in any column: the store must refuse them with one line.
# (A number in a TEXT column is stored as text: column affinity. A blob is stored as is.)
BAD_PINS = [
    ("approved_at", "'yesterday'"),
    ("approved_at", "x'00ff'"),
    ("approver", "x'41'"),
    ("fingerprint", "x'00'"),
    ("definition", "x'7b7d'"),
    ("cosmetic_fingerprint", "x'00'"),
]


@pytest.mark.parametrize(("column", "value"), BAD_PINS)
@pytest.mark.parametrize("json", [False, True])
def test_a_malformed_pin_row_is_one_line_and_exit_2(
    tmp_path: Path, column: str, value: str, json: bool
) -> None:
    path = tmp_path / "pins.db"
    a_store(path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(f"UPDATE conduit_mcp_pins SET {column} = {value}")
    conn.close()
    code, out, err = run("pins", "list", "--store", str(path), *(["--json"] if json else []))
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "conduit_mcp_pins" in err and column in err


@pytest.mark.parametrize(
    ("column", "value"),
    [("at", "'noon'"), ("name", "x'74'"), ("server_id", "x'73'"), ("outcome", "x'00'")],
)
@pytest.mark.parametrize("json", [False, True])
def test_a_malformed_audit_row_is_one_line_and_exit_2(
    tmp_path: Path, column: str, value: str, json: bool
) -> None:
    path = tmp_path / "pins.db"
    a_store(path)
    conn = sqlite3.connect(path)
    values = {"id": "100", "at": "1.5", "server_id": "'s'", "name": "'t'", "action": "'revoke'"}
    values[column] = value
    columns = ", ".join(values)
    with conn:
        conn.execute(
            f"INSERT INTO conduit_mcp_audit ({columns}) VALUES ({', '.join(values.values())})"
        )
    conn.close()
    code, out, err = run("pins", "audit", "--store", str(path), *(["--json"] if json else []))
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_time_no_calendar_holds_is_shown_as_a_number(tmp_path: Path) -> None:
    path = tmp_path / "pins.db"
    a_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE conduit_mcp_pins SET approved_at = 1e300")
    code, out, _ = run("pins", "list", "--store", str(path))
    assert code == 0 and "1e+300" in out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def other_application(path: Path, application_id: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
        conn.execute("INSERT INTO users (email) VALUES ('a@example.com')")
        conn.execute(f"PRAGMA application_id = {application_id}")
    conn.close()


READ_ONLY = [
    ("list",),
    ("audit",),
    ("check", str(EVERYTHING), "--server-id", "e"),
    ("changes", str(EVERYTHING), "--server-id", "e"),
    ("revoke", "--server-id", "e", "--tool", "echo"),
]


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: c[0])
@pytest.mark.parametrize("kind", ["empty", "other-app", "other-app-marked"])
def test_a_file_that_is_not_a_pin_store_is_refused_and_left_untouched(
    tmp_path: Path, command: tuple[str, ...], kind: str
) -> None:
    path = tmp_path / "data.db"
    if kind == "empty":
        path.write_bytes(b"")
    else:
        other_application(path, 0 if kind == "other-app" else 0x12345678)
    before = digest(path)
    code, out, err = run("pins", command[0], "--store", str(path), *command[1:])
    assert (code, out) == (2, "")
    assert "not a pin store" in err and len(err.strip().splitlines()) == 1
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.db"]  # no -wal, no -journal


def test_approve_refuses_a_file_another_application_marked(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    other_application(path, 0x12345678)
    before = digest(path)
    code, _, err = run("pins", "approve", str(EVERYTHING), "--store", str(path), "--server-id", "e")
    assert code == 2 and "not a pin store" in err
    assert digest(path) == before


def test_a_store_carries_the_marker_and_an_older_store_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "pins.db"
    a_store(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x434D4350
        conn.execute("PRAGMA application_id = 0")  # as a store from before the marker
    conn.close()
    code, out, _ = run("pins", "list", "--store", str(path), "--json")
    assert code == 0 and '"name": "t"' in out
