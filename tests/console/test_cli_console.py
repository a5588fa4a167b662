"""`conduit-mcp console`'s commands: accounts added and removed from a shell (the password from
stdin, a token printed once), a store that does not exist refused before anything listens, the
listen address checked. conduit-defined."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import PinStore

runner = CliRunner()


def test_add_user_from_stdin_with_a_token_then_remove_it(tmp_path: Path) -> None:
    store = str(tmp_path / "pins.db")
    PinStore(store).close()
    add = ["console", "add-user", "alice", "--store", store, "--role", "approver"]
    result = runner.invoke(app, [*add, "--password-stdin", "--token"], input="correct horse\n")
    assert result.exit_code == 0, result.stderr
    said, token = result.stdout.splitlines()
    assert said == "account alice (approver)" and token.startswith("cmcp_")
    with PinStore(store) as pins:
        assert pins.login("alice", "correct horse") is not None
        assert pins.token_account(token) is not None
        entry, issued = pins.audit_log(action="account")
        assert issued.outcome == "token"
        assert entry.approver is not None and "conduit-mcp console" in entry.approver
    short = runner.invoke(app, [*add, "--password-stdin"], input="short\n")
    assert short.exit_code == 2 and "10 to" in short.stderr
    bad = runner.invoke(app, ["console", "add-user", "x", "--store", store, "--role", "admin"])
    assert bad.exit_code == 2
    gone = runner.invoke(app, ["console", "remove-user", "alice", "--store", store])
    assert gone.exit_code == 0 and gone.stdout.strip() == "removed alice"
    again = runner.invoke(app, ["console", "remove-user", "alice", "--store", store])
    assert again.exit_code == 1 and "no account alice" in again.stdout
    with PinStore(store) as pins:
        assert pins.accounts() == () and pins.token_account(token) is None


def test_the_console_refuses_a_missing_store_and_a_bad_address(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.db")
    result = runner.invoke(app, ["console", "--pins", missing])
    assert result.exit_code == 2 and "no such pin store" in result.stderr
    assert f"--pins {missing}:" in result.stderr  # the option the person typed, not --store
    assert not Path(missing).exists()
    result = runner.invoke(app, ["console", "--pins", missing, "--listen", "nowhere"])
    assert result.exit_code == 2 and "HOST:PORT" in " ".join(result.stderr.split())
    result = runner.invoke(app, ["console"])
    assert result.exit_code == 2 and "--pins" in result.stderr
    gone = runner.invoke(app, ["console", "remove-user", "a", "--store", missing])
    assert gone.exit_code == 2 and "console add-user" in gone.stderr
    assert not Path(missing).exists()


def test_add_user_on_a_fresh_machine_creates_the_store_and_says_so(tmp_path: Path) -> None:
    """conduit-defined (newcomer trial): docs/console.md's "Start it" ran `console add-user`
    first and failed `no such pin store` on a fresh machine. The first account creates the
    store (stderr says so, a mistyped location shows); the console then serves it."""
    fresh = tmp_path / "pins.db"
    add = ["console", "add-user", "alice", "--store", str(fresh), "--role", "approver"]
    result = runner.invoke(app, [*add, "--password-stdin"], input="correct horse\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "account alice (approver)\n"
    assert result.stderr == f"created the pin store {fresh}\n"
    with PinStore(str(fresh), create=False) as pins:
        assert pins.login("alice", "correct horse") is not None
    again = runner.invoke(app, [*add, "--password-stdin"], input="correct horse\n")
    assert again.exit_code == 0 and again.stderr == ""  # an existing store: nothing said
