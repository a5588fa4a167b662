"""The conduit-mcp command: exit codes, JSON output, one-line errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rfc8785
from typer.testing import CliRunner

from conduit_mcp.cli import app

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
EVERYTHING = CORPUS / "tools" / "server-everything" / "tools-list--none-client-caps.json"
EVERYTHING_FULL = CORPUS / "tools" / "server-everything" / "tools-list--full-client-caps.json"

runner = CliRunner()


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
