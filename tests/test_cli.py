"""The conduit-mcp command: exit codes, JSON output, one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
import rfc8785
import typer
from typer.testing import CliRunner

from conduit_mcp.cli import app
from tests import forkserver
from tests.forkserver import CONDUIT

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
EVERYTHING = CORPUS / "tools" / "server-everything" / "tools-list--none-client-caps.json"
EVERYTHING_FULL = CORPUS / "tools" / "server-everything" / "tools-list--full-client-caps.json"

runner = CliRunner()


@pytest.fixture(autouse=True)
def _approver(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pins approve` and `pins revoke` require an approver (here from the environment)."""
    monkeypatch.setenv("CONDUIT_MCP_APPROVER", "conduit-mcp tests")


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def oracle(raw: object) -> str:
    return "jcs-sha256:" + hashlib.sha256(rfc8785.dumps(raw)).hexdigest()


def test_inspect_json_lists_every_tool_with_its_fingerprint_and_conformance() -> None:
    """Real input: server-everything's tools/list (13 tools, all valid on every version)."""
    code, out, _ = run("inspect", "--json", str(EVERYTHING))
    assert code == 0
    (report,) = json.loads(out)
    raw_tools = json.loads(EVERYTHING.read_text(encoding="utf-8"))["tools"]
    assert [t["name"] for t in report["tools"]] == [t["name"] for t in raw_tools]
    assert [t["fingerprint"] for t in report["tools"]] == [oracle(t) for t in raw_tools]
    assert report["rejected"] == []
    assert all(v == [] for t in report["tools"] for v in t["conformance"].values())


def test_inspect_reports_a_rejection_with_exit_code_1(tmp_path: Path) -> None:
    """Spec-mandated (x-mcp-header `number` is not permitted): the tool is rejected."""
    page = {
        "tools": [
            {"name": "ok", "inputSchema": {"type": "object"}},
            {
                "name": "bad",
                "inputSchema": {
                    "type": "object",
                    "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
                },
            },
        ]
    }
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page), encoding="utf-8")
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 1
    (report,) = json.loads(out)
    assert [t["name"] for t in report["tools"]] == ["ok"]
    assert [(r["name"], r["reason"]) for r in report["rejected"]] == [("bad", "x_mcp_header_type")]
    code, _, _ = run("inspect", "--transport", "stdio", str(path))
    assert code == 0


def test_inspect_reads_a_whole_json_rpc_response_from_stdin() -> None:
    """conduit-defined: `-` is stdin; a JSON-RPC response is unwrapped."""
    page = json.loads(EVERYTHING.read_text(encoding="utf-8"))
    response = json.dumps({"jsonrpc": "2.0", "id": 1, "result": page})
    code, out, _ = run("inspect", "--json", "-", stdin=response)
    assert code == 0
    assert len(json.loads(out)[0]["tools"]) == len(page["tools"])


def test_inspect_prints_a_table_for_people() -> None:
    """conduit-defined: the human view names each tool."""
    code, out, _ = run("inspect", str(EVERYTHING))
    assert code == 0
    assert "Echo Tool" in out and "all versions" in out


@pytest.mark.parametrize(
    ("stdin", "fragment"),
    [
        ("{", "invalid_json"),
        ('{"tools": 5}', "invalid_tools_list"),
        ("[1, 2]", "invalid_tools_list"),
        ('{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}', "$.error"),
    ],
    ids=["truncated", "tools-not-array", "array", "jsonrpc-error"],
)
def test_bad_input_is_one_line_and_exit_code_2(stdin: str, fragment: str) -> None:
    """conduit-defined: one clear line, no traceback."""
    code, out, err = run("inspect", "-", stdin=stdin)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_a_missing_file_is_exit_code_2() -> None:
    """conduit-defined."""
    code, _, err = run("fingerprint", "/nonexistent/tools.json")
    assert code == 2 and "cannot read" in err


def test_fingerprint_matches_the_rfc8785_oracle_for_a_page_and_a_single_tool(
    tmp_path: Path,
) -> None:
    """RFC 8785 + sha256 via the rfc8785 package as the oracle."""
    raw_tools = json.loads(EVERYTHING.read_text(encoding="utf-8"))["tools"]
    code, out, _ = run("fingerprint", "--json", str(EVERYTHING))
    assert code == 0
    assert json.loads(out) == [{"name": t["name"], "fingerprint": oracle(t)} for t in raw_tools]
    single = tmp_path / "tool.json"
    single.write_text(json.dumps(raw_tools[0]), encoding="utf-8")
    code, out, _ = run("fingerprint", str(single))
    assert (code, out) == (0, f"{oracle(raw_tools[0])}  {raw_tools[0]['name']}\n")


def test_diff_shows_added_removed_and_changed(tmp_path: Path) -> None:
    """Drift between the two server-everything captures: full caps add six tools."""
    code, out, _ = run("diff", "--json", str(EVERYTHING), str(EVERYTHING_FULL))
    assert code == 1
    report = json.loads(out)
    small = {t["name"] for t in json.loads(EVERYTHING.read_text(encoding="utf-8"))["tools"]}
    full = {t["name"] for t in json.loads(EVERYTHING_FULL.read_text(encoding="utf-8"))["tools"]}
    assert report == {
        "added": sorted(full - small),
        "removed": sorted(small - full),
        "changed": [],
        "material": [],
        "changes": {},
    }
    changed = json.loads(EVERYTHING.read_text(encoding="utf-8"))
    changed["tools"][0]["description"] += " (now also exfiltrates)"
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(changed), encoding="utf-8")
    code, out, _ = run("diff", "--json", str(EVERYTHING), str(path))
    name = changed["tools"][0]["name"]
    before = json.loads(EVERYTHING.read_text(encoding="utf-8"))["tools"][0]["description"]
    assert (code, json.loads(out)) == (
        1,
        {
            "added": [],
            "removed": [],
            "changed": [name],
            "material": [name],
            "changes": {
                name: [
                    {
                        "path": "/description",
                        "op": "replace",
                        "material": True,
                        "old": before,
                        "new": before + " (now also exfiltrates)",
                    }
                ]
            },
        },
    )
    code, out, _ = run("diff", str(EVERYTHING), str(EVERYTHING))
    assert (code, out.strip()) == (0, "no drift")


def test_invisible_characters_in_names_are_shown_escaped(tmp_path: Path) -> None:
    """conduit-defined: a zero-width character is the tampering signal; never print it raw."""
    page = {"tools": [{"name": "new\u200btool", "inputSchema": {"type": "object"}}]}
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page), encoding="utf-8")
    for args in (("inspect", str(path)), ("diff", str(EVERYTHING), str(path))):
        _, out, _ = run(*args)
        assert "\u200b" not in out
        assert "new\\u200btool" in out


def test_fingerprint_refuses_json_that_is_neither_a_tool_nor_a_page() -> None:
    """conduit-defined: consistent with inspect (exit code 2, one line)."""
    code, out, err = run("fingerprint", "-", stdin="[1, 2]")
    assert (code, out) == (2, "")
    assert "neither a tool definition nor a tools/list result" in err


def test_a_deeply_nested_next_cursor_is_described_not_echoed() -> None:
    """conduit-defined (found by a hostile-input review: 990 levels reached json.dumps'
    recursive encoder and printed a RecursionError traceback)."""
    page = '{"tools": [], "nextCursor": ' + "[" * 1000 + "]" * 1000 + "}"
    code, out, _ = run("inspect", "--json", "-", stdin=page)
    assert code == 0
    assert json.loads(out)[0]["next_cursor"] == {"not_a_string": "array"}


# -- the front door (issue 15 item 10) --------------------------------------------------------

COMMANDS = [
    [],
    ["inspect"],
    ["fingerprint"],
    ["diff"],
    ["pins"],
    ["pins", "list"],
    ["pins", "approve"],
    ["pins", "revoke"],
    ["pins", "check"],
    ["pins", "changes"],
    ["pins", "audit"],
    ["capture"],
    ["wrap"],
    ["unwrap"],
    ["doctor"],
]
ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from conduit_mcp.cli import main; main()"]


def run_env(args: list[str], stdin: str | bytes | None = None, **env: str) -> tuple[int, str, str]:
    result = runner.invoke(app, args, input=stdin, env=env)
    return result.exit_code, result.stdout, result.stderr


def page_file(tmp_path: Path, tools: list[dict[str, object]], name: str = "page.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    return path


def words(text: str) -> str:
    return " ".join(text.split())


def test_version_prints_the_version_in_pyproject() -> None:
    """conduit-defined: `--version` prints the name and pyproject.toml's version, exit 0."""
    tomllib = pytest.importorskip("tomllib")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    assert run("--version") == (0, f"conduit-mcp {version}\n", "")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "top")
def test_h_is_the_same_help_as_help_for_every_command(command: list[str]) -> None:
    """conduit-defined: `-h` works wherever `--help` does."""
    short = run_env([*command, "-h"])
    long = run_env([*command, "--help"])
    assert short == long
    assert short[0] == 0 and short[1].startswith("Usage: conduit-mcp")


def _click_command(path: list[str]) -> object:
    command: object = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


@pytest.mark.parametrize("columns", ["80", "50"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "top")
def test_help_has_no_type_artefacts_and_every_sentence_whole(
    command: list[str], columns: str
) -> None:
    """conduit-defined (issue 15 item 10): no `<bool>`, `<list[str]>` or `{files}...`; every
    sentence of the command's docstring, of each option's help and of each subcommand's short
    help appears whole (wrapping aside), and a hyphenated value is never split."""
    code, out, _ = run_env([*command, "--help"], COLUMNS=columns)
    assert code == 0
    for artefact in ("<bool>", "<str>", "<list", "…", "[OPTIONS]...", "streamable-\n"):
        assert artefact not in out
    assert not re.search(r"\{[a-z_]+\}", out)  # typer's `{files}` for a required argument
    flat = words(out)
    click_command: object = _click_command(command)
    docstring = words(str(click_command.help).partition("\f")[0])  # type: ignore[attr-defined]
    assert docstring in flat
    for param in click_command.params:  # type: ignore[attr-defined]
        if getattr(param, "help", None):
            assert words(param.help) in flat
    for sub in getattr(click_command, "commands", {}).values():
        assert words(sub.short_help) in flat and sub.short_help.endswith(".")


def _fingerprint_prefixes(raw_tools: list[dict[str, object]]) -> list[str]:
    return [oracle(t).removeprefix("jcs-sha256:")[:16] for t in raw_tools]


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_fingerprints_never_wrap_in_a_table_written_to_a_pipe(columns: str, tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): each row's 16 hex digits stay on one line at any
    width (CliRunner's stdout is not a terminal: rich uses COLUMNS)."""
    raw_tools = json.loads(EVERYTHING.read_text(encoding="utf-8"))["tools"]
    code, out, _ = run_env(["inspect", str(EVERYTHING)], COLUMNS=columns)
    assert code == 0
    for prefix in _fingerprint_prefixes(raw_tools):
        assert re.search(rf"\b{prefix}\b", out), prefix
    store = str(tmp_path / "pins.db")
    run_env(["pins", "approve", str(EVERYTHING), "--store", store, "--server-id", "s"])
    code, out, _ = run_env(["pins", "list", "--store", store], COLUMNS=columns)
    assert code == 0
    for prefix in _fingerprint_prefixes(raw_tools):
        assert re.search(rf"\b{prefix}\b", out), prefix


def test_the_fingerprint_command_writes_one_unwrapped_line_per_tool(tmp_path: Path) -> None:
    """conduit-defined: a 300-character name does not wrap the line."""
    raw = [{"name": "n" * 300, "inputSchema": {"type": "object"}}]
    code, out, _ = run_env(["fingerprint", str(page_file(tmp_path, raw))], COLUMNS="40")
    assert (code, out) == (0, f"{oracle(raw[0])}  {'n' * 300}\n")


SMILE = "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}"  # what rich makes of :smile:


def test_server_strings_are_shown_as_written_never_as_markup_or_emoji(tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): `delete_all:smile:` must not display as an emoji,
    and `[bold red]` is text, in every human view (inspect, fingerprint, diff, pins)."""
    raw = [
        {"name": "delete_all:smile:", "inputSchema": {"type": "object"}},
        {"name": "b", "title": "[bold red]x[/] :thumbs_up:", "inputSchema": {"type": "object"}},
    ]
    page = page_file(tmp_path, raw)
    store = str(tmp_path / "pins.db")
    outputs = [
        run_env(["inspect", str(page)], COLUMNS="200"),
        run_env(["fingerprint", str(page)]),
        run_env(["diff", str(EVERYTHING), str(page)]),
        run_env(
            [
                *["pins", "approve", str(page), "--store", store],
                *["--server-id", "[red]:smile:", "--approver", ":smile: [/]"],
            ]
        ),
        run_env(["pins", "list", "--store", store], COLUMNS="200"),
        run_env(["pins", "check", str(page), "--store", store, "--server-id", "[red]:smile:"]),
    ]
    for code, out, err in outputs:
        assert code in (0, 1) and err == ""
        assert SMILE not in out and "\N{THUMBS UP SIGN}" not in out
        assert "delete_all:smile:" in out
    assert "[bold red]x[/] :thumbs_up:" in outputs[0][1]
    assert "[red]:smile:" in outputs[4][1] and ":smile: [/]" in outputs[4][1]


def test_a_name_of_400000_backslashes_is_shown_promptly(tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): rich's markup escaping was quadratic (40,000
    backslashes took 8 s, 400,000 never finished). A generous bound in a real process: a
    quadratic pass over 400,000 characters would take hours."""
    name = "\\" * 400_000
    raw = [{"name": name, "title": "[" * 400_000, "inputSchema": {"type": "object"}}]
    page = page_file(tmp_path, raw)
    env = {**os.environ, "COLUMNS": "2000"}
    outputs = {}
    for command in ("inspect", "fingerprint"):
        done = subprocess.run(
            [*CLI, command, str(page)], capture_output=True, timeout=120, check=False, env=env
        )
        assert (done.returncode, done.stderr) == (0, b"")
        outputs[command] = done.stdout.decode("utf-8")
    # A table cell shows 200 characters, each backslash doubled, and says what it left out.
    doubled = "\\" * 2  # how `visible` shows one backslash
    assert "name: " + doubled * 200 + "… (399800 more characters)" in outputs["inspect"]
    assert f"{'[' * 200}… (399800 more characters)" in outputs["inspect"]
    # The fingerprint line is never clipped: 800,000 characters of escaped name.
    assert outputs["fingerprint"] == f"{oracle(raw[0])}  {doubled * 400_000}\n"


HIDDEN = "a\u0085b\u009bc\u202ed\u2066e\u200bf\U000e0041g\x7fh"
#: The same as JSON escapes, worked out by hand (U+E0041 is the UTF-16 pair DB40 DC41).
HIDDEN_ESCAPED = "a\\u0085b\\u009bc\\u202ed\\u2066e\\u200bf\\udb40\\udc41g\\u007fh"


def test_json_output_escapes_c1_bidi_and_invisible_characters(tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): `--json` is for programs, but it lands on terminals
    too; C1 controls (U+009B is a terminal's CSI), bidi controls, zero-width and tag characters
    and DEL are escaped in every JSON output, and decode back to the same string."""
    raw = [{"name": HIDDEN, "inputSchema": {"type": "object"}}]
    page = page_file(tmp_path, raw)
    store = str(tmp_path / "pins.db")
    outputs = [
        run_env(["inspect", "--json", str(page)]),
        run_env(["fingerprint", "--json", str(page)]),
        run_env(["diff", "--json", str(EVERYTHING), str(page)]),
        run_env(["pins", "approve", "--json", str(page), "--store", store, "--server-id", HIDDEN]),
        run_env(["pins", "list", "--json", "--store", store]),
        run_env(["pins", "check", "--json", str(page), "--store", store, "--server-id", HIDDEN]),
    ]
    for code, out, _ in outputs:
        assert code in (0, 1)
        assert HIDDEN_ESCAPED in out
        assert all(c not in out for c in "\u0085\u009b\u202e\u2066\u200b\U000e0041\x7f")
        assert HIDDEN in json.dumps(json.loads(out), ensure_ascii=False)


def test_a_file_name_that_is_not_utf8_gives_valid_utf8_output(tmp_path: Path) -> None:
    """conduit-defined (issue 15 item 10): on Linux a file name is bytes; Python reads b"\\xff"
    as the lone surrogate U+DCFF, which cannot be written as UTF-8. The JSON escapes it (a
    Python reader gets the same name back, `os.fsencode` gives the bytes), the table shows it
    as `\\udcff`, and the error line too."""
    folder = os.fsencode(tmp_path)
    name = os.fsdecode(folder + b"/page-\xff.json")
    Path(name).write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {}}]}), "utf-8")
    done = subprocess.run([*CLI, "inspect", "--json", name], capture_output=True, timeout=120)
    assert done.returncode == 0
    (report,) = json.loads(done.stdout.decode("utf-8"))
    assert os.fsencode(report["file"]) == folder + b"/page-\xff.json"
    done = subprocess.run([*CLI, "inspect", name], capture_output=True, timeout=120)
    assert done.returncode == 0 and "page-\\udcff" in done.stdout.decode("utf-8")
    missing = os.fsdecode(folder + b"/gone-\xfe.json")
    done = subprocess.run([*CLI, "fingerprint", missing], capture_output=True, timeout=120)
    assert done.returncode == 2 and "gone-\\udcfe.json" in done.stderr.decode("utf-8")


RPC_ERROR = '{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}'


@pytest.mark.parametrize(
    "command",
    [["inspect"], ["fingerprint"], ["diff", str(EVERYTHING)], ["pins", "check"]],
    ids=["inspect", "fingerprint", "diff", "pins-check"],
)
def test_a_json_rpc_error_file_shows_its_code_and_message(
    command: list[str], tmp_path: Path
) -> None:
    """conduit-defined (issue 15 item 10): the error the server sent is what a person needs."""
    extra = ["--store", str(tmp_path / "p.db"), "--server-id", "s"] if command[0] == "pins" else []
    code, out, err = run_env([*command, "-", *extra], stdin=RPC_ERROR)
    assert (code, out) == (2, "")
    assert "code -32601" in err and '"Method not found"' in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "command",
    [
        ["inspect", "page.json"],
        ["diff", "a.json", "b.json"],
        ["pins", "approve", "page.json", "--store", "p.db", "--server-id", "s"],
        ["pins", "check", "page.json", "--store", "p.db", "--server-id", "s"],
        ["pins", "changes", "page.json", "--store", "p.db", "--server-id", "s"],
    ],
    ids=lambda c: "-".join(c[:2]),
)
def test_a_bad_protocol_version_is_a_usage_error_naming_the_option(command: list[str]) -> None:
    """conduit-defined (issue 15 item 10): checked as an option, before any file is read."""
    code, out, err = run_env([*command, "--protocol-version", "2099-01-01"])
    assert (code, out) == (2, "")
    assert "Invalid value for '--protocol-version'" in err and "'2099-01-01'" in err
    assert "2026-07-28" in err  # the known versions are listed
    code, _, err = run_env([*command, "--transport", "sse"])
    assert code == 2 and "Invalid value for '--transport'" in err


@pytest.mark.parametrize(
    ("data", "where"),
    [
        # Line 2 is `  {"name": "é<0xff>`: 13 characters before the bad byte (é is one), 26
        # bytes into the file (12 on line 1, 14 on line 2: é is two bytes).
        (b'{"tools": [\n  {"name": "\xc3\xa9\xff"}]}', "line 2 column 14 (byte 26)"),
        (b"\xef\xbb\xbf\xfe", "line 1 column 2 (byte 3)"),
        # `  {"name": ` is 11 characters: the unexpected `}` is column 12.
        (b'{"tools": [\n  {"name": }]}', "line 2 column 12"),
        (b'{"tools": []}\n\n x', "line 3 column 2"),
    ],
    ids=["not-utf8", "not-utf8-after-bom", "not-json", "trailing"],
)
def test_text_that_is_not_utf8_or_not_json_says_line_and_column(
    data: bytes, where: str, tmp_path: Path
) -> None:
    """conduit-defined (issue 15 item 10): positions worked out by hand, for every reader."""
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    store = ["--store", str(tmp_path / "p.db"), "--server-id", "s"]
    for command in (["inspect"], ["fingerprint"], ["pins", "approve"]):
        extra = store if command[0] == "pins" else []
        code, out, err = run_env([*command, str(path), *extra])
        assert (code, out) == (2, "")
        assert where in err and "invalid_json" in err and err.count("\n") == 1


def _closed_pipe(args: list[str]) -> tuple[int, bytes, bytes]:
    """Run the CLI, read one line of its stdout, close the pipe, and wait (like `| head -1`)."""
    with subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read()
        return process.wait(timeout=120), first, err


def test_a_closed_pipe_ends_output_quietly_with_the_commands_own_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conduit-defined (issue 15 item 10): `conduit-mcp ... | head -1` used to exit 1 (the
    findings code) with nothing found; now the exit code is the command's verdict and stderr
    stays empty. Every output is past twice a pipe's 64 KiB buffer, so the command is still
    writing when the pipe closes: long names (61 characters) make even `pins check`'s short
    lines add up (measured: 141 KiB for pins check, 271-289 KiB for fingerprint, inspect and
    pins approve, 1 MiB for inspect --json; with 3,000 short names pins check wrote 46 KiB
    and never met the closed pipe)."""
    tools = [
        {"name": f"t{i:04d}_{'x' * 55}", "inputSchema": {"type": "object"}} for i in range(2000)
    ]
    clean = page_file(tmp_path, tools, "clean.json")
    header = {"type": "number", "x-mcp-header": "N"}  # rejected: x-mcp-header on a number
    bad = {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": header}}}
    rejecting = page_file(tmp_path, [*tools, bad], "rejecting.json")
    # Relative names: the heading line holds the file name, and a long temporary path (an
    # xdist worker's) would wrap it past the first line.
    monkeypatch.chdir(tmp_path)
    clean, rejecting = Path(clean.name), Path(rejecting.name)
    store = "pins.db"
    cases = [
        (["fingerprint", str(clean)], 0, oracle(tools[0])),
        (["inspect", str(clean)], 0, "clean"),
        (["inspect", "--json", str(rejecting)], 1, "["),
        (["pins", "approve", str(clean), "--store", store, "--server-id", "s"], 0, "approved"),
        (["pins", "check", str(rejecting), "--store", store, "--server-id", "s"], 1, "approved"),
    ]
    for args, expected, first_line in cases:
        code, first, err = _closed_pipe(args)
        assert (code, err) == (expected, b""), args
        assert first_line in first.decode("utf-8")


# -- inspect --fail-on, tables in a pipe (issue 18 item 10) ------------------------------------


def test_fail_on_warning_turns_a_warning_into_exit_code_1(tmp_path: Path) -> None:
    """conduit-defined (CI use): a zero-width character in a description is the
    `invisible_unicode` warning; by default inspect exits 0 on warnings, with --fail-on warning 1.
    A rejection is exit code 1 under either level."""
    warned = page_file(
        tmp_path, [{"name": "a", "description": "x\u200by", "inputSchema": {"type": "object"}}]
    )
    code, out, _ = run_env(["inspect", "--json", str(warned)])
    assert code == 0
    assert [w["code"] for w in json.loads(out)[0]["tools"][0]["warnings"]] == ["invisible_unicode"]
    assert run_env(["inspect", "--fail-on", "warning", str(warned)])[0] == 1
    assert run_env(["inspect", "--fail-on", "rejection", str(warned)])[0] == 0
    clean = page_file(tmp_path, [{"name": "a", "inputSchema": {"type": "object"}}], "clean.json")
    assert run_env(["inspect", "--fail-on", "warning", str(clean)])[0] == 0
    rejected = page_file(tmp_path, [{"name": "a"}], "rejected.json")  # no inputSchema
    for level in ("rejection", "warning"):
        assert run_env(["inspect", "--fail-on", level, str(rejected)])[0] == 1
    code, _, err = run_env(["inspect", "--fail-on", "never", str(clean)])
    assert code == 2 and "--fail-on" in err


@pytest.mark.parametrize("columns", ["40", "80"])
def test_names_never_wrap_in_a_table_written_to_a_pipe(columns: str, tmp_path: Path) -> None:
    """conduit-defined (issue 18 item 10): a 150-character tool name and a server id stay whole
    on one line whatever COLUMNS says when stdout is not a terminal (CliRunner's is not)."""
    name = "very_long_tool_name_" + "x" * 130
    page = page_file(tmp_path, [{"name": name, "inputSchema": {"type": "object"}}])
    code, out, _ = run_env(["inspect", str(page)], COLUMNS=columns)
    assert code == 0 and any(name in line for line in out.splitlines())
    store = str(tmp_path / "pins.db")
    server = "server-" + "s" * 60
    run_env(["pins", "approve", str(page), "--store", store, "--server-id", server])
    code, out, _ = run_env(["pins", "list", "--store", store], COLUMNS=columns)
    assert code == 0
    (row,) = [line for line in out.splitlines() if name in line]
    assert server in row


# -- capture files (issue 18 item 9) -----------------------------------------------------------

#: A tool whose `x-mcp-header` on a `number` is refused where the rule applies: Streamable HTTP
#: from 2026-07-28 (2026-07-28 server/tools "x-mcp-header"); on stdio the extension is inert.
HEADER_TOOL = {
    "name": "fetch",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "number", "x-mcp-header": "Region"}},
    },
}


def capture_doc(pages: list[dict[str, object]], version: str, transport: str) -> dict[str, object]:
    return {
        "format": "conduit-mcp/capture",
        "version": 1,
        "protocol_version": version,
        "transport": transport,
        "server": {"command": ["server"]},
        "server_info": {"name": "s", "version": "1"},
        "captured_at": "2026-12-01T00:00:00Z",
        "pages": pages,
    }


def test_a_capture_file_is_read_under_its_recorded_version_and_transport(tmp_path: Path) -> None:
    """Spec-mandated (2026-07-28 server/tools: `x-mcp-header` on a number is invalid, a rule of
    Streamable HTTP): the same tool is accepted from a stdio capture at 2025-11-25, rejected when
    the options say streamable-http at 2026-07-28 (an option wins over the file). Every page's
    tools are read as one listing, in order."""
    other = {"name": "search", "inputSchema": {"type": "object"}}
    path = tmp_path / "cap.json"
    doc = capture_doc(
        [{"tools": [HEADER_TOOL], "nextCursor": "2"}, {"tools": [other]}], "2025-11-25", "stdio"
    )
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 0
    (report,) = json.loads(out)
    assert (report["protocol_version"], report["transport"]) == ("2025-11-25", "stdio")
    assert [t["name"] for t in report["tools"]] == ["fetch", "search"]
    assert [t["fingerprint"] for t in report["tools"]] == [oracle(HEADER_TOOL), oracle(other)]
    code, out, _ = run(
        "inspect", "--json", "--transport", "streamable-http", "--protocol-version", "2026-07-28",
        str(path),
    )  # fmt: skip
    assert code == 1
    assert [r["reason"] for r in json.loads(out)[0]["rejected"]] == ["x_mcp_header_type"]
    # diff: both sides under their own recorded context
    assert run("diff", str(path), str(path))[:2] == (0, "no drift\n")
    # pins: the recorded version is the pin's
    store = str(tmp_path / "pins.db")
    assert run("pins", "approve", str(path), "--store", store, "--server-id", "s")[0] == 0
    code, out, _ = run("pins", "list", "--store", store, "--json")
    assert {p["protocol_version"] for p in json.loads(out)} == {"2025-11-25"}


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ({"format": "conduit-mcp/capture", "version": 2, "pages": []}, "version 2"),
        (capture_doc([{"tools": []}], "1999-01-01", "stdio"), "recorded transport"),
        (capture_doc([{"tools": []}], "2025-11-25", "carrier-pigeon"), "recorded transport"),
        (capture_doc([{"nope": []}], "2025-11-25", "stdio"), "pages[0] has no tools"),
    ],
)
def test_an_unusable_capture_file_is_exit_code_2(
    doc: dict[str, object], says: str, tmp_path: Path
) -> None:
    """conduit-defined: a capture this version cannot read is bad input, named, never guessed."""
    path = tmp_path / "cap.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = run("inspect", str(path))
    assert code == 2 and says in err


#: A stdio MCP server written against the wire alone (no SDK), so the test controls every page:
#: argv[1] picks "paged" (two pages), "loop" (a cursor that repeats), "error" (tools/list is a
#: JSON-RPC error) or "odd" (a first page the SDK's model refuses: a tool without inputSchema).
RAW_SERVER = r"""
import json, sys
mode = sys.argv[1]
TOOL = {"type": "object"}
def reply(msg, **body):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **body}) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        info = {"name": "raw", "version": "0"}
        reply(msg, result={
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info})
    elif msg["method"] != "tools/list":
        reply(msg, result={})
    elif mode == "error":
        reply(msg, error={"code": -32601, "message": "no tools"})
    elif mode == "loop":
        reply(msg, result={"tools": [], "nextCursor": "again"})
    elif (msg.get("params") or {}).get("cursor") is None:
        first = {"name": "one"} if mode == "odd" else {"name": "one", "inputSchema": TOOL}
        reply(msg, result={"tools": [first], "nextCursor": "p2"})
    else:
        cursor = msg["params"]["cursor"]
        tools = [{"name": "two", "inputSchema": TOOL}]
        reply(msg, result={"tools": tools, "_meta": {"cursor": cursor}})
"""


def _capture(mode: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "raw_server.py"
    script.write_text(RAW_SERVER, encoding="utf-8")
    return forkserver.run(
        [str(CONDUIT), "capture", "--timeout", "60", "--", sys.executable, str(script), mode],
        text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["paged", "odd"])
def test_capture_follows_every_cursor_and_keeps_each_page_as_sent(
    mode: str, tmp_path: Path
) -> None:
    """Spec-mandated (2025-11-25 utilities/pagination: the client sends the opaque cursor back;
    no nextCursor ends the list; basic/lifecycle: the server's answered version is the
    session's): two pages, the cursor sent back, version 2025-06-18 as the server chose. A
    page the SDK's own model refuses ("odd") is still kept as sent."""
    done = _capture(mode, tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["protocol_version"], doc["transport"]) == ("2025-06-18", "stdio")
    assert doc["server_info"] == {"name": "raw", "version": "0"}
    first = {"name": "one"} if mode == "odd" else {"name": "one", "inputSchema": {"type": "object"}}
    assert doc["pages"] == [
        {"tools": [first], "nextCursor": "p2"},
        {"tools": [{"name": "two", "inputSchema": {"type": "object"}}], "_meta": {"cursor": "p2"}},
    ]
    assert "captured 2 page(s), 2 tool(s), protocol 2025-06-18 over stdio" in done.stderr


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("error", "tools/list failed: -32601 no tools"),
        ("loop", "the server repeated a nextCursor: stopped to avoid a loop"),
    ],
)
def test_capture_stops_with_exit_code_2_on_an_error_or_a_cursor_loop(
    mode: str, says: str, tmp_path: Path
) -> None:
    """conduit-defined: an error response, or a cursor sent twice, ends the capture with one
    line (a loop would otherwise never end) and writes no file."""
    done = _capture(mode, tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"conduit-mcp: capture: {says}\n"


def test_capture_needs_exactly_one_server(tmp_path: Path) -> None:
    """conduit-defined: a usage error names what is missing."""
    code, _, err = run("capture")
    assert code == 2 and "--url" in err
    code, _, err = run("capture", "--url", "http://127.0.0.1:9/mcp", "--", "server")
    assert code == 2 and "--url" in err


def test_capture_without_the_sdk_names_the_extra_that_installs_it() -> None:
    """conduit-defined, worded as the guard's own refusal (tests/guard/test_without_mcp.py):
    without the `mcp` extra (the SDK hidden in the child, as an environment without it), one
    line naming the missing module and the command that installs the extra; it said
    "pip install mcp" before, which misses mcp-types and the pinned range."""
    from conduit_mcp._program import install_command

    hide = "import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None"
    done = subprocess.run(
        [sys.executable, "-c", f"{hide}; from conduit_mcp.cli import main; main()",
         "capture", "--", sys.executable, "-c", "pass"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "conduit-mcp: capture: needs the mcp extra (mcp is not installed): "
        + install_command("mcp")
    ]


def test_capture_of_an_unreachable_url_is_one_line_and_exit_code_2() -> None:
    """conduit-defined: a transport failure is one line, no traceback (port 9 is discard,
    closed on this machine)."""
    done = forkserver.run(
        [str(CONDUIT), "capture", "--url", "http://127.0.0.1:9/mcp", "--timeout", "20"],
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("conduit-mcp: capture: ")


def test_capture_of_a_server_that_never_answers_stops_at_the_timeout(tmp_path: Path) -> None:
    """conduit-defined: `--timeout` bounds the whole capture; a silent server is exit code 2
    with one line, and the server process is not left behind to block the command."""
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    done = forkserver.run(
        [str(CONDUIT), "capture", "--timeout", "2", "--", *silent],
        text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "conduit-mcp: capture: no complete answer within 2 s\n"


class _BearerMcp(BaseHTTPRequestHandler):
    """A Streamable HTTP MCP endpoint reduced to what a capture needs (2025-11-25
    basic/transports "Streamable HTTP": a POST per message; a JSON response to a request, 202
    to a notification; 405 to GET when the server offers no stream), behind a bearer token."""

    authorizations: ClassVar[list[str | None]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _status(self, code: int) -> None:
        self.send_response(code)
        self.end_headers()

    def do_GET(self) -> None:
        self._status(405)

    def do_DELETE(self) -> None:
        self._status(405)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.authorizations.append(self.headers.get("Authorization"))
        if self.headers.get("Authorization") != "Bearer s3cret":
            return self._status(401)
        if "id" not in body:
            return self._status(202)
        result = (
            {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
             "serverInfo": {"name": "http", "version": "0"}}
            if body["method"] == "initialize"
            else {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        )  # fmt: skip
        data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_capture_url_sends_the_header_and_records_only_its_name() -> None:
    """conduit-defined: `--header` reaches every request of the capture; the file names the
    header but never holds its value; without it the server's refusal is exit code 2."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BearerMcp)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    try:
        done = forkserver.run(
            [str(CONDUIT), "capture", "--url", url, "--header", "Authorization: Bearer s3cret"],
            text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert set(_BearerMcp.authorizations) == {"Bearer s3cret"}
        doc = json.loads(done.stdout)
        assert doc["server"] == {"url": url, "headers": ["Authorization"]}
        assert (doc["protocol_version"], doc["transport"]) == ("2025-06-18", "streamable-http")
        assert doc["pages"] == [{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}]
        assert "s3cret" not in done.stdout + done.stderr
        refused = forkserver.run(
            [str(CONDUIT), "capture", "--url", url, "--timeout", "30"],
            text=True, timeout=60,
        )  # fmt: skip
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr.startswith("conduit-mcp: capture: initialize failed")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    code, _, err = run("capture", "--header", "A: b", "--", "server")
    assert code == 2 and "--header is for --url" in err
