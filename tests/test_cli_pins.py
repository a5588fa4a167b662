"""`conduit-mcp pins list | approve | revoke | check | changes --store LOCATION` and the
field-level `diff` output, on a sqlite file and a real PostgreSQL server."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from typer.testing import CliRunner

from conduit_mcp.cli import app
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
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
    assert [t["status"] for t in json.loads(out)["tools"]] == ["new"]


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
