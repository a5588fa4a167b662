"""`conduit-mcp pins list | approve | revoke | check | changes | audit --store LOCATION` and
the field-level `diff` output, on a sqlite file and a real PostgreSQL server."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from conduit_mcp_wire import LATEST
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import PinStore
from tests import forkserver
from tests.forkserver import CONDUIT
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
EVERYTHING = CORPUS / "tools" / "server-everything" / "tools-list--none-client-caps.json"

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def oracle(raw: object) -> str:
    return "jcs-sha256:" + hashlib.sha256(rfc8785.dumps(raw)).hexdigest()


def original() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EVERYTHING.read_text(encoding="utf-8"))
    return data


def drifted(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """server-everything's page with a description rug pull (tool 0) and a new title (tool 1)."""
    data = copy.deepcopy(original())
    data["tools"][0]["description"] += " (now also exfiltrates)"
    data["tools"][1]["title"] = "New title"
    path = tmp_path / "drifted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, data


@pytest.fixture(params=["file", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "pins.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_approve_check_changes_list_revoke_round_trip(store: str, tmp_path: Path) -> None:
    tools = original()["tools"]
    code, out, _ = run(
        "pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "everything",
        "--approver", "alice", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == [{"name": t["name"], "fingerprint": oracle(t)} for t in tools]

    code, out, _ = run("pins", "check", str(EVERYTHING), "--store", store,
                       "--server-id", "everything", "--json")  # fmt: skip
    assert code == 0
    assert {t["status"] for t in json.loads(out)["tools"]} == {"approved"}

    path, data = drifted(tmp_path)
    code, out, _ = run("pins", "check", str(path), "--store", store,
                       "--server-id", "everything", "--json")  # fmt: skip
    assert code == 1
    statuses = {t["name"]: t["status"] for t in json.loads(out)["tools"]}
    assert statuses[tools[0]["name"]] == "changed"
    assert statuses[tools[1]["name"]] == "cosmetic"
    assert {s for n, s in statuses.items() if n not in (tools[0]["name"], tools[1]["name"])} == {
        "approved"
    }

    code, out, _ = run("pins", "changes", str(path), "--store", store,
                       "--server-id", "everything", "--json")  # fmt: skip
    assert code == 1
    report = json.loads(out)
    assert report["changes"] == {
        tools[0]["name"]: [
            {
                "path": "/description",
                "op": "replace",
                "material": True,
                "old": tools[0]["description"],
                "new": data["tools"][0]["description"],
            }
        ],
        tools[1]["name"]: [
            {
                "path": "/title",
                "op": "replace",
                "material": False,
                "old": tools[1]["title"],
                "new": "New title",
            }
        ],
    }
    assert report["new"] == []

    code, out, _ = run("pins", "changes", str(path), "--store", store, "--server-id", "everything")
    assert code == 1
    assert "/description  [material]" in out and "/title  [cosmetic]" in out

    code, out, _ = run("pins", "list", "--store", store, "--json")
    assert code == 0
    listed = json.loads(out)
    assert [(p["name"], p["fingerprint"], p["approver"]) for p in listed] == sorted(
        (t["name"], oracle(t), "alice") for t in tools
    )

    name = tools[0]["name"]
    code, out, _ = run("pins", "revoke", "--store", store, "--server-id", "everything",
                       "--tool", name, "--approver", "bob")  # fmt: skip
    assert code == 0 and "revoked" in out
    code, out, _ = run("pins", "revoke", "--store", store, "--server-id", "everything",
                       "--tool", name)  # fmt: skip
    assert code == 1 and "no pin" in out
    code, out, _ = run("pins", "check", str(EVERYTHING), "--store", store,
                       "--server-id", "everything", "--tool", name, "--json")  # fmt: skip
    assert code == 1
    assert [t["status"] for t in json.loads(out)["tools"]] == [
        "revoked"
    ]  # issue 29: a revoked tool says so


def test_unchanged_page_has_no_changes_and_exit_code_0(tmp_path: Path) -> None:
    store = str(tmp_path / "pins.db")
    assert run("pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "e")[0] == 0
    code, out, _ = run("pins", "changes", str(EVERYTHING), "--store", store, "--server-id", "e")
    assert (code, out.strip()) == (0, "no changes")


def test_a_store_that_cannot_be_opened_is_exit_code_2_without_the_password() -> None:
    url = "postgresql://user:hunter2@127.0.0.1:1/pins"
    code, out, err = run("pins", "list", "--store", url)
    assert (code, out) == (2, "")
    assert "hunter2" not in err and "cannot open the pin store" in err
    assert len(err.strip().splitlines()) == 1


def test_approving_a_tool_the_page_does_not_hold_is_bad_input(tmp_path: Path) -> None:
    store = str(tmp_path / "pins.db")
    code, _, err = run("pins", "approve", str(EVERYTHING), "--store", store,
                       "--server-id", "e", "--tool", "no-such-tool")  # fmt: skip
    assert code == 2 and "no accepted tool named 'no-such-tool'" in err


def test_diff_text_lists_each_change_with_its_pointer(tmp_path: Path) -> None:
    path, data = drifted(tmp_path)
    code, out, _ = run("diff", str(EVERYTHING), str(path))
    assert code == 1
    lines = out.splitlines()
    name0, name1 = data["tools"][0]["name"], data["tools"][1]["name"]
    assert f"changed  {name0}" in lines and f"changed  {name1}" in lines
    assert any(line.strip().startswith("/description  [material]") for line in lines)
    assert any(line.strip().startswith("/title  [cosmetic]") for line in lines)


# -- a store that does not exist (newcomer trial) ---------------------------------------------

MISSING_STORE_COMMANDS = {
    "list": ["pins", "list"],
    "audit": ["pins", "audit"],
    "check": ["pins", "check", str(EVERYTHING), "--server-id", "mine"],
    "changes": ["pins", "changes", str(EVERYTHING), "--server-id", "mine"],
    "revoke": ["pins", "revoke", "--server-id", "mine", "--tool", "echo"],
}


def tables_in(url: str) -> list[str]:
    """The tables on a PostgreSQL URL's search path (its first schema), from the catalog."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY table_name"
        ).fetchall()
    return [str(row[0]) for row in rows]


@pytest.mark.parametrize("command", MISSING_STORE_COMMANDS.values(), ids=MISSING_STORE_COMMANDS)
def test_a_mistyped_store_is_a_usage_error_and_creates_nothing(
    command: list[str], store: str, tmp_path: Path
) -> None:
    """conduit-defined (newcomer trial): `pins list --store typo.db` printed an empty table
    and `pins check ... --store typo2.db` said `new` for every tool, each creating the file.
    Only `approve` creates a store; the others exit 2 with one line naming `--store` and what
    does create one (a second newcomer trial: the hint named pins approve only), and leave no
    file (sqlite) and no table (an empty PostgreSQL schema) behind."""
    code, out, err = run(*command, "--store", store)
    assert (code, out) == (2, "")
    assert err == (
        f"conduit-mcp: --store {store}: no such pin store (a proxy run with --pins creates one,"
        " as do pins approve, policy set and console add-user)\n"
    )
    if store.startswith("postgresql://"):
        assert tables_in(store) == []
    else:
        assert list(tmp_path.iterdir()) == []  # no file, no -wal or -shm either


def test_approve_on_an_empty_postgresql_schema_creates_the_store(
    request: pytest.FixtureRequest,
) -> None:
    url: str = request.getfixturevalue("postgres_url")
    code, _, _ = run("pins", "approve", str(EVERYTHING), "--store", url, "--server-id", "e")
    assert code == 0
    assert tables_in(url) == [
        "conduit_mcp_accounts",
        "conduit_mcp_audit",
        "conduit_mcp_calls",
        "conduit_mcp_instructions",
        "conduit_mcp_migrations",
        "conduit_mcp_pending",
        "conduit_mcp_pins",
        "conduit_mcp_policy",
        "conduit_mcp_rejected",
        "conduit_mcp_revoked",
        "conduit_mcp_servers",
        "conduit_mcp_tokens",
    ]
    assert run("pins", "list", "--store", url)[0] == 0


def test_approve_creates_the_store_that_the_others_then_open(tmp_path: Path) -> None:
    store = tmp_path / "new.db"
    code, _, _ = run("pins", "approve", str(EVERYTHING), "--store", str(store), "--server-id", "e")
    assert code == 0 and store.is_file()
    code, out, _ = run("pins", "check", str(EVERYTHING), "--store", str(store),
                       "--server-id", "e")  # fmt: skip
    assert code == 0
    assert out.split() == [w for t in original()["tools"] for w in ("approved", t["name"])]


def test_pinstore_create_false_opens_existing_files_only(tmp_path: Path) -> None:
    """`PinStore(path, create=False)`: sqlite's `mode=rw` URI; `?`, `#` and `%` in a file name
    are part of the name (percent-encoded in the URI), not a query or a fragment."""
    for name in ("plain.db", "odd?mode=rwc#x%41.db"):
        path = tmp_path / name
        with pytest.raises(FileNotFoundError):
            PinStore(str(path), create=False)
        assert list(tmp_path.iterdir()) == []
        PinStore(str(path)).close()  # create=True (the default) creates it
        with PinStore(str(path), create=False) as pins:
            assert pins.pins() == ()
        for made in tmp_path.iterdir():
            made.unlink()
    with pytest.raises(FileNotFoundError):
        PinStore("", create=False)
    with PinStore(":memory:", create=False) as pins:  # private and new by definition
        assert pins.pins() == ()


def test_a_directory_or_a_file_that_is_not_a_store_is_still_cannot_open(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a database, " * 100, encoding="utf-8")
    for where in (tmp_path, tmp_path / "notes.txt"):
        code, out, err = run("pins", "list", "--store", str(where))
        assert (code, out) == (2, "")
        assert "cannot open the pin store" in err and err.count("\n") == 1


def test_help_says_which_commands_create_a_store() -> None:
    code, out, _ = run("pins", "approve", "-h")
    assert code == 0
    created = "A store that does not exist (a sqlite file, or the tables of a PostgreSQL "
    assert created + "database) is created." in " ".join(out.split())
    for command in ("list", "check", "changes", "audit", "revoke"):
        code, out, _ = run("pins", command, "-h")
        assert code == 0
        assert "It must exist: this command never creates a store." in " ".join(out.split())


# -- pins audit ---------------------------------------------------------------------------------


def test_audit_shows_approvals_checks_and_revocations_oldest_first(
    store: str, tmp_path: Path
) -> None:
    """Expected rows worked out from the actions taken, fingerprints and definitions from the
    `rfc8785` package (the approved definition is RFC 8785 canonical JSON text)."""
    tools = original()["tools"]
    first, second = tools[0], tools[1]
    run("pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "everything",
        "--tool", first["name"], "--tool", second["name"], "--approver", "alice")  # fmt: skip
    run("pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "other",
        "--tool", first["name"])  # fmt: skip
    path, data = drifted(tmp_path)
    code, _, _ = run("pins", "check", str(path), "--store", store, "--server-id", "everything",
                     "--tool", first["name"], "--tool", second["name"])  # fmt: skip
    assert code == 1
    run("pins", "revoke", "--store", store, "--server-id", "everything", "--tool", first["name"],
        "--approver", "bob")  # fmt: skip

    code, out, err = run("pins", "audit", "--store", store, "--server-id", "everything", "--json")
    assert (code, err) == (0, "")
    rows = json.loads(out)
    version = LATEST  # the CLI's default --protocol-version (the newest registered date)
    expected = [
        ("approve", None, first["name"], oracle(first), None, "alice", version,
         rfc8785.dumps(first).decode("utf-8")),
        ("approve", None, second["name"], oracle(second), None, "alice", version,
         rfc8785.dumps(second).decode("utf-8")),
        # checks log the listed fingerprint and the pinned one, in page order
        ("check", "changed", first["name"], oracle(data["tools"][0]), oracle(first), None,
         version, None),
        ("check", "cosmetic", second["name"], oracle(data["tools"][1]), oracle(second), None,
         version, None),
        ("revoke", None, first["name"], oracle(first), None, "bob", None, None),
    ]  # fmt: skip
    keys = ("action", "outcome", "name", "fingerprint", "previous_fingerprint", "approver",
            "protocol_version", "definition")  # fmt: skip
    assert [tuple(row[k] for k in keys) for row in rows] == expected
    assert {row["server_id"] for row in rows} == {"everything"}
    ids = [row["id"] for row in rows]
    assert ids == sorted(ids) and len(set(ids)) == 5
    assert all(isinstance(row["at"], float) for row in rows)

    code, out, _ = run("pins", "audit", "--store", store, "--json", "--tool", first["name"])
    assert code == 0
    assert [(r["server_id"], r["action"]) for r in json.loads(out)] == [
        ("everything", "approve"),
        ("other", "approve"),
        ("everything", "check"),
        ("everything", "revoke"),
    ]

    code, out, _ = run("pins", "audit", "--store", store, "--server-id", "everything")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 5
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    short = {name: oracle(t)[11:27] for name, t in ((0, first), (1, second))}
    assert re.fullmatch(
        rf"{stamp}  approve         {short[0]}  server everything  tool {first['name']}  by alice",
        lines[0],
    )
    assert re.fullmatch(
        rf"{stamp}  check cosmetic  {oracle(data['tools'][1])[11:27]}  server everything  "
        rf"tool {second['name']}  pinned {short[1]}",
        lines[3],
    )
    assert lines[4].endswith(f"tool {first['name']}  by bob")

    code, out, _ = run("pins", "audit", "--store", store, "--server-id", "nobody")
    assert (code, out) == (0, "no audit entries\n")


HIDDEN = "a\u0085b\u009bc\u202ed\u2066e\u200bf\U000e0041g\x7fh"
#: The same as JSON escapes, worked out by hand (U+E0041 is the UTF-16 pair DB40 DC41).
HIDDEN_JSON = "a\\u0085b\\u009bc\\u202ed\\u2066e\\u200bf\\udb40\\udc41g\\u007fh"
#: As a person sees it (`visible`): \\u for the BMP, \\U above it.
HIDDEN_TEXT = "a\\u0085b\\u009bc\\u202ed\\u2066e\\u200bf\\U000e0041g\\u007fh"
SMILE = "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}"  # what rich makes of :smile:


def test_audit_shows_server_strings_as_written_with_hidden_characters_escaped(
    tmp_path: Path,
) -> None:
    """conduit-defined (issue 15 item 10, for the new command): no markup or emoji shortcodes
    interpreted, C1/bidi/invisible characters escaped in text and in `--json` (valid UTF-8 that
    decodes back to the same strings)."""
    page = tmp_path / "page.json"
    raw = [{"name": "delete_all:smile:" + HIDDEN, "inputSchema": {"type": "object"}}]
    page.write_text(json.dumps({"tools": raw}), encoding="utf-8")
    store = str(tmp_path / "pins.db")
    server_id, approver = "[red]" + HIDDEN, "[bold]:smile:" + HIDDEN
    code, _, _ = run("pins", "approve", str(page), "--store", store, "--server-id", server_id,
                     "--approver", approver)  # fmt: skip
    assert code == 0

    code, out, err = run("pins", "audit", "--store", store)
    assert (code, err) == (0, "")
    assert SMILE not in out
    assert out.endswith(
        f"  server [red]{HIDDEN_TEXT}  tool delete_all:smile:{HIDDEN_TEXT}"
        f"  by [bold]:smile:{HIDDEN_TEXT}\n"
    )

    code, out, _ = run("pins", "audit", "--store", store, "--json")
    assert code == 0
    out.encode("utf-8")  # valid UTF-8: no lone surrogate reaches the output
    assert all(c not in out for c in "\u0085\u009b\u202e\u2066\u200b\U000e0041\x7f")
    assert out.count(HIDDEN_JSON) == 3 + 1  # server, name, approver, and the definition's name
    (row,) = json.loads(out)
    assert (row["server_id"], row["name"], row["approver"]) == (
        server_id,
        raw[0]["name"],
        approver,
    )
    assert json.loads(row["definition"]) == raw[0]


def test_audit_to_a_closed_pipe_is_quiet_with_exit_code_0(tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): `pins audit | head -1` ends quietly; 3,000 lines are
    well past a pipe's 64 KiB buffer."""
    page = tmp_path / "page.json"
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(3000)]
    page.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    store = str(tmp_path / "pins.db")
    assert run("pins", "approve", str(page), "--store", store, "--server-id", "s")[0] == 0
    for extra in ([], ["--json"]):
        command = [sys.executable, "-c", "from conduit_mcp.cli import main; main()"]
        with subprocess.Popen(
            [*command, "pins", "audit", "--store", store, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            first = process.stdout.readline().decode("utf-8")
            process.stdout.close()
            err = process.stderr.read()
            assert (process.wait(timeout=120), err) == (0, b"")
        assert "approve" in first and ("t0" in first or extra)


# -- docs/pins.md: a page from a live server ----------------------------------------------------

PINS_DOC = Path(__file__).resolve().parents[2] / "docs" / "pins.md"


@pytest.mark.usefixtures("forked_children")  # the SDK servers, forked: tests/conftest.py
def test_the_documented_page_from_a_live_server_is_what_the_guard_pins(tmp_path: Path) -> None:
    """Real parts: docs/pins.md's snippet runs the SDK's stdio server and saves its raw
    `tools/list` result; the CLI approves it, and a `Guard` listing the same server against the
    same store finds every tool approved (the saved page is byte for byte what the guard sees,
    or a fingerprint would differ)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from conduit_mcp.guard import Guard

    blocks = re.findall(r"```python\n(.*?)```", PINS_DOC.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if "def save_tools_list" in b]
    namespace: dict[str, Any] = {}
    exec(compile(block, str(PINS_DOC), "exec"), namespace)
    page: Path = namespace["PAGE"]
    store = str(tmp_path / "pins.db")
    code, out, _ = run("pins", "approve", str(page), "--store", store, "--server-id", "demo")
    (tool,) = json.loads(page.read_text(encoding="utf-8"))["tools"]
    assert (code, out.split()) == (0, ["approved", oracle(tool), "add"])

    async def list_through_guard() -> list[tuple[str, str | None]]:
        with PinStore(store) as pins:
            guard = Guard("demo", pins=pins)
            params = StdioServerParameters(command=sys.executable, args=["-c", namespace["SERVER"]])
            async with stdio_client(params) as (read, write):
                async with ClientSession(*guard.wrap_streams(read, write)) as session:
                    await session.initialize()
                    await session.list_tools()
            return [(e.kind, e.tool) for e in guard.events]

    # A pinned, unchanged tool raises no event; a fingerprint that differs would be tool_changed.
    assert anyio.run(list_through_guard) == []
    code, out, _ = run("pins", "audit", "--store", store, "--json")
    assert [(r["action"], r["name"]) for r in json.loads(out)] == [("approve", "add")]


@pytest.mark.usefixtures("forked_children")  # the SDK servers, forked: tests/conftest.py
def test_a_captured_page_is_what_the_guard_pins_at_the_negotiated_version(tmp_path: Path) -> None:
    """Real parts: `conduit-mcp capture` runs the SDK's stdio server (the docs/pins.md one) in
    a real process; `pins approve` of the capture pins at the version the server negotiated
    (mcp 2.3.0's server answers the SDK client's 2025-11-25), and a `Guard` listing the same
    server finds every tool approved: the captured page is what the guard sees."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from conduit_mcp.guard import Guard

    blocks = re.findall(r"```python\n(.*?)```", PINS_DOC.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if "def save_tools_list" in b]
    server_source = block.split('SERVER = """', 1)[1].split('"""', 1)[0]
    script = tmp_path / "server.py"
    script.write_text(server_source, encoding="utf-8")
    capture = tmp_path / "capture.json"
    done = forkserver.run(
        [str(CONDUIT), "capture", "-o", str(capture), "--", sys.executable, str(script)],
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    store = str(tmp_path / "pins.db")
    code, _, _ = run("pins", "approve", str(capture), "--store", store, "--server-id", "demo")
    assert code == 0
    code, out, _ = run("pins", "list", "--store", store, "--json")
    assert [(p["name"], p["protocol_version"]) for p in json.loads(out)] == [("add", "2025-11-25")]

    async def list_through_guard() -> list[tuple[str, str | None]]:
        with PinStore(store) as pins:
            guard = Guard("demo", pins=pins)
            params = StdioServerParameters(command=sys.executable, args=[str(script)])
            async with stdio_client(params) as (read, write):
                async with ClientSession(*guard.wrap_streams(read, write)) as session:
                    await session.initialize()
                    await session.list_tools()
            return [(e.kind, e.tool) for e in guard.events]

    assert anyio.run(list_through_guard) == []


@pytest.mark.parametrize(
    "command",
    [
        ["pins", "list", "--store", "{store}"],
        ["pins", "audit", "--store", "{store}"],
        ["pins", "approve", str(EVERYTHING), "--store", "{store}"],
        ["pins", "check", str(EVERYTHING), "--store", "{store}"],
        ["pins", "changes", str(EVERYTHING), "--store", "{store}"],
        ["pins", "revoke", "--tool", "echo", "--store", "{store}"],
    ],
    ids=lambda c: c[1],
)
@pytest.mark.parametrize("server_id", ["", "s\udcff"], ids=["empty", "not-utf8"])
def test_an_empty_or_undecodable_server_id_is_a_usage_error_naming_the_option(
    command: list[str], server_id: str, tmp_path: Path
) -> None:
    """conduit-defined (newcomer trial): `--server-id ""` ended in a ValueError traceback from
    `pins list` and `pins check`; argv that is not UTF-8 reaches Python as a lone surrogate."""
    store = str(tmp_path / "pins.db")
    assert run("pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "s")[0] == 0
    args = [store if arg == "{store}" else arg for arg in command]
    result = runner.invoke(app, [*args, "--server-id", server_id])
    assert (result.exit_code, result.stdout) == (2, "")
    assert "Invalid value for '--server-id'" in result.stderr
    assert isinstance(result.exception, SystemExit)  # a usage error, not a traceback
