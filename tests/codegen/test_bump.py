"""`make bump`, end to end, in a temporary copy of the project (schema/README.md's recipe).

The new version is made the way issue 31 measured a bump (tests/codegen/new_version.py: a new
optional member on Tool and on CallToolResult, a new content block type, a renamed tagged
union, a new LoggingLevel value), dated 2029-04-16, a date no doc uses. The fast tests run the
failure kinds (each refused before datamodel-code-generator runs, so in seconds) and the
structural diff; the `slow` one runs the whole bump and then the project's own tests in the
copy, which must pass with no hand edit but the checklist's decisions.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp.client import Error
from conduit_mcp.client._versions import check_version
from tests.codegen import new_version

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import bump  # noqa: E402
import schemadiff  # noqa: E402

#: The version the bump adds: a date after every pin that no doc names.
NEW = "2029-04-16"
COMMIT = "b0f60ba5409db7a6582440a7b473cc0398890f15"
BASE = new_version.base_version()


def test_the_new_version_is_unknown_before_the_bump_and_no_doc_names_it() -> None:
    """Control: without the pin the client refuses NEW, so the bump below proves something; and
    no doc uses the date (a doc's example date is no evidence the test ran)."""
    with pytest.raises(Error) as info:
        check_version(NEW)
    assert info.value.reason == "unknown_protocol_version"
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *ROOT.glob("*/README.md")]
    docs += [*(ROOT / "docs").glob("*.md")]
    assert [str(p) for p in docs if NEW in p.read_text(encoding="utf-8")] == []


# -- the checklist: the structural diff, worked out from the changes made --------------------


def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (ROOT / "schema" / version / "schema.json").read_text(encoding="utf-8")
    )
    return loaded


def test_the_checklist_names_every_change_of_the_made_up_version() -> None:
    """conduit-defined: each change new_version.py makes is named with its pointer and the place
    where it is decided; nothing else is listed as a decision."""
    old = _schema(BASE)
    new = new_version.make_schema(old)
    changes = schemadiff.diff(old, new)
    kinds = {(c.kind, c.subject, c.detail) for c in changes}
    assert ("renamed", "ElicitationParams", "100% alike in shape") in kinds
    assert ("content_block", "ContentBlock", "VideoContent") in kinds
    assert ("enum_added", "LoggingLevel", '"trace"') in kinds
    assert ("member_added", "Tool.deprecated", "optional, boolean") in kinds
    assert ("member_added", "CallToolResult.elapsedMs", "optional, integer") in kinds
    assert ("added", "VideoContent", "") in kinds
    assert len(changes) == 6
    lines = schemadiff.checklist(changes, NEW, BASE, set(new["$defs"]))
    decide = [line for line in lines if line.startswith("[decide]")]
    assert len(decide) == 2
    assert "ElicitRequestParams -> ElicitationParams" in decide[0]
    assert '"video"' in decide[1] and "src/conduit_mcp/llm/_shape.py" in decide[1]
    assert "(/$defs/ContentBlock/anyOf/5)" in decide[1]
    assert not [line for line in lines if line.startswith("!!")]


def test_sep_3279_shaped_changes_are_loud_and_first() -> None:
    """conduit-defined, after SEP-3279 (proposed): `outputSchema` replaced by `outputVariants`,
    `content` + `structuredContent` by `outputs`. Each removal from Tool / CallToolResult is a
    `!!` line before any other, naming the modules that read the member."""
    old = _schema(BASE)
    new = copy.deepcopy(old)
    tool = new["$defs"]["Tool"]["properties"]
    tool["outputVariants"] = {"type": "array", "items": tool.pop("outputSchema")}
    result = new["$defs"]["CallToolResult"]
    result["properties"]["outputs"] = {"type": "array", "items": {"type": "object"}}
    del result["properties"]["content"], result["properties"]["structuredContent"]
    result["required"] = ["outputs", "resultType"]
    lines = schemadiff.checklist(schemadiff.diff(old, new), NEW, BASE, set(new["$defs"]))
    loud = [line for line in lines if line.startswith("!!")]
    assert lines[: len(loud)] == loud
    assert any("Tool.outputSchema removed" in line and "client/" in line for line in loud)
    assert any("CallToolResult.content removed" in line for line in loud)
    assert any("CallToolResult.structuredContent removed" in line for line in loud)
    assert any("CallToolResult.outputs" in line and "required" in line for line in loud)


def test_the_git_blob_is_gits_own() -> None:
    """Real parts: `git hash-object` is the oracle for the pin's `git_blob`."""
    path = ROOT / "schema" / BASE / "schema.json"
    done = subprocess.run(
        ["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip("git is not available")
    assert bump.git_blob(path.read_bytes()) == done.stdout.strip()


# -- every failure: one line naming the file and the pointer; nothing changed ---------------


def _copy(tmp_path: Path, parts: tuple[str, ...] = ("schema", "codegen", "generated")) -> Path:
    project = tmp_path / "project"
    for part in parts:
        shutil.copytree(ROOT / part, project / part, ignore=shutil.ignore_patterns("__pycache__"))
    return project


def _tree(project: Path) -> dict[str, str]:
    return {
        str(p.relative_to(project)): hashlib.sha256(p.read_bytes()).hexdigest()
        for part in ("schema", "generated")
        for p in sorted((project / part).rglob("*"))
        if p.is_file()
    }


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=project, capture_output=True, text=True, check=False
    )


def _bump(project: Path, schema: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run(
        project,
        "codegen/bump.py",
        "--version",
        NEW,
        "--schema",
        str(schema),
        "--source-commit",
        COMMIT,
        *extra,
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def _made_up(tmp_path: Path, change: Any = None, text: str | None = None) -> Path:
    schema = new_version.make_schema(_schema(BASE))
    if change is not None:
        change(schema["$defs"])
    path = tmp_path / "next" / "schema.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(schema, indent=2), encoding="utf-8")
    return path


def _collide(defs: dict[str, Any]) -> None:
    defs["annotations"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    defs["CallToolResult"]["properties"]["note"] = {"$ref": "#/$defs/annotations"}


def _untaggable(defs: dict[str, Any]) -> None:
    defs["ElicitRequestURLParams"]["required"].remove("mode")


def _root_renamed(defs: dict[str, Any]) -> None:
    renamed = new_version._renamed_refs(defs, "InputRequiredResult", "InputResult")
    renamed["InputResult"] = renamed.pop("InputRequiredResult")
    defs.clear()
    defs.update(renamed)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda d: d["ContentBlock"]["anyOf"].append({"$ref": "#/$defs/VideoContentt"}),
            "schema.json: /$defs/ContentBlock/anyOf/6/$ref: $ref '#/$defs/VideoContentt'"
            " names no definition",
            id="dangling-ref",
        ),
        pytest.param(
            _collide,
            f"schema/{NEW}/schema.json: /$defs/annotations: its class name Annotations is taken"
            " by /$defs/Annotations; stopping (a public class is never renamed)",
            id="name-collision",
        ),
        pytest.param(
            _untaggable,
            f"schema/{NEW}/schema.json: /$defs/ElicitationParams: tagged in the previous version"
            " (/$defs/ElicitRequestParams: by mode (member)); here its arms cannot be told apart",
            id="renamed-union-loses-its-tag",
        ),
        pytest.param(
            _root_renamed,
            f"schema/{NEW}/schema.json: /$defs/InputRequiredResult: absent, but"
            " codegen/generate.py ROOTS has InputRequiredResult since 2026-07-28",
            id="renamed-root",
        ),
    ],
)
def test_a_refused_schema_is_one_line_and_changes_nothing(
    tmp_path: Path, change: Any, expected: str
) -> None:
    """Issue 31: each failure is one line naming the file and the JSON Pointer, no traceback;
    schema/ (PINNED.json included) and generated/ are as before (the vendoring is undone)."""
    project = _copy(tmp_path)
    before = _tree(project)
    line = _one_line(_bump(project, _made_up(tmp_path, change)))
    assert line.startswith("error: ") and expected in line
    assert _tree(project) == before


def test_invalid_json_in_the_new_schema_names_the_line_and_pointer(tmp_path: Path) -> None:
    """Issue 31: invalid JSON is one line with line, column and the pointer it stopped in."""
    project = _copy(tmp_path)
    before = _tree(project)
    text = '{\n  "$schema": "x",\n  "$defs": {\n    "Tool": {"type": "object",}\n  }\n}\n'
    schema = _made_up(tmp_path, text=text)
    line = _one_line(_bump(project, schema))
    assert line == (
        f"error: {schema}:4:31: invalid JSON (Expecting property name enclosed in double"
        " quotes) in /$defs/Tool"
    )
    assert _tree(project) == before


def test_a_trailing_comma_in_pinned_json_is_one_line(tmp_path: Path) -> None:
    """Issue 31: a trailing comma in PINNED.json stops make generate and make bump in one
    line (it was a 23-line traceback)."""
    project = _copy(tmp_path)
    pins = project / "schema" / "PINNED.json"
    text = pins.read_text(encoding="utf-8")
    first = '"local_path": "2024-11-05/schema.json"'
    pins.write_text(text.replace(first, first + ",", 1), encoding="utf-8")
    before = _tree(project)
    for args in (("codegen/generate.py", "--check"), ("codegen/generate.py",)):
        line = _one_line(_run(project, *args))
        assert line.startswith("error: schema/PINNED.json:")
        assert "invalid JSON (Expecting property name enclosed in double quotes) in /schemas/0"
    line = _one_line(_bump(project, _made_up(tmp_path)))
    assert "schema/PINNED.json:" in line and "in /schemas/0" in line
    assert _tree(project) == before


def test_a_vendored_folder_without_a_pin_stops_the_generator(tmp_path: Path) -> None:
    """Issue 31: an unpinned folder used to exit 0 and delete its version's module."""
    project = _copy(tmp_path)
    pins_path = project / "schema" / "PINNED.json"
    pins = json.loads(pins_path.read_text(encoding="utf-8"))
    pins["schemas"] = [p for p in pins["schemas"] if p["version"] != "2025-06-18"]
    pins_path.write_text(json.dumps(pins, indent=2), encoding="utf-8")
    before = _tree(project)
    line = _one_line(_run(project, "codegen/generate.py"))
    assert line == (
        "error: schema/2025-06-18/: vendored, but schema/PINNED.json /schemas has no entry for"
        " '2025-06-18'; refusing to generate (`make bump` writes both)"
    )
    assert _tree(project) == before
    assert (project / "generated" / "conduit_mcp_wire" / "v2025_06_18.py").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("--version", "2026-01-01"), "older than the latest pinned", id="older"),
        pytest.param(("--version", BASE), f"schema/{BASE}/: already vendored", id="present"),
        pytest.param(("--version", "2029-02-30"), "not a YYYY-MM-DD date", id="not-a-date"),
        pytest.param(("--source-commit", "abc"), "not a 40-hex-digit", id="bad-commit"),
        pytest.param(("--source-commit", ""), "give SOURCE_COMMIT=", id="no-commit-no-clone"),
    ],
)
def test_a_bump_that_cannot_be_right_is_refused(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    """conduit-defined: the arguments are checked before anything is written."""
    project = _copy(tmp_path)
    before = _tree(project)
    schema = _made_up(tmp_path)
    options = {"--version": NEW, "--source-commit": COMMIT, **dict([args])}
    argv = ["codegen/bump.py", "--schema", str(schema)]
    for key, value in options.items():
        argv += [key, value] if value else []
    line = _one_line(_run(project, *argv))
    assert expected in line
    assert _tree(project) == before


def test_an_examples_folder_without_a_definition_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: an examples folder that names no definition (a renamed definition's old folder)
    is reported with its pointer, not skipped in silence."""
    from tests.conformance import examples

    project = _copy(tmp_path, ("schema",))
    stale = project / "schema" / BASE / "examples" / "ElicitRequestParameters"
    stale.mkdir()
    (stale / "form.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(examples, "SCHEMA_DIR", project / "schema")
    monkeypatch.setattr(examples, "ROOT", project)
    examples._schema.cache_clear()
    try:
        missing, outside = examples.unmodelled_folders(BASE)
    finally:
        examples._schema.cache_clear()
    assert missing == [
        (f"schema/{BASE}/examples/ElicitRequestParameters", "/$defs/ElicitRequestParameters", 1)
    ]
    assert "LoggingMessageNotification" in outside


# -- the whole bump -------------------------------------------------------------------------


def _hashes(root: Path, parts: tuple[str, ...]) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for part in parts
        for p in sorted((root / part).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


#: What the copy's own tests must still pass after the bump (the tests that held per-version
#: facts by hand before issue 31), and the one that fails until the checklist's decision.
AFTER_BUMP = (
    "tests/client/test_versions.py",
    "tests/client/test_conformance.py",
    "tests/client/test_intake_one_pass.py::test_the_record_covers_every_input_at_every_version",
    "tests/codegen/test_answers.py::test_tools_call_result_has_the_arms_of_the_version",
    "tests/codegen/test_codegen.py",
    "tests/codegen/test_names.py",
    "tests/codegen/test_tagged_unions.py",
    "tests/guard/test_sdkfast.py",
)


@pytest.mark.slow  # regenerates every version's models, then runs tests in the copy (~2 min)
def test_make_bump_needs_no_hand_edit_but_the_checklists_decisions(tmp_path: Path) -> None:
    """The recipe, as a maintainer runs it: `make bump`, then the project's tests."""
    project = tmp_path / "project"
    parts = ("schema", "codegen", "src", "generated", "tests", "bench", "docs")
    for part in parts:
        shutil.copytree(ROOT / part, project / part, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("Makefile", "pyproject.toml", "constraints-dev.txt", "README.md"):
        shutil.copy2(ROOT / name, project / name)
    (project / ".venv").symlink_to(ROOT / ".venv")
    source = tmp_path / "next"
    new_version.write(source, BASE)
    before = _hashes(project, parts)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(project / "src"), str(project / "generated")]),
    }
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "bump",
            f"VERSION={NEW}",
            f"SCHEMA={source / 'schema.json'}",
            f"EXAMPLES={source / 'examples'}",
            f"SOURCE_COMMIT={COMMIT}",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr

    # The files a bump changes: the vendored folder, the pins, the new module and the index,
    # the intake digests; nothing else.
    after = _hashes(project, parts)
    changed = sorted(k for k in after if before.get(k) != after[k])
    module = f"v{NEW.replace('-', '_')}"
    assert [k for k in changed if not k.startswith(f"schema/{NEW}/")] == [
        "generated/conduit_mcp_wire/__init__.py",
        f"generated/conduit_mcp_wire/{module}.py",
        "schema/PINNED.json",
        "tests/fixtures/intake_reference.json",
    ]
    assert sorted(k for k in before if k not in after) == []
    vendored = source / "schema.json"
    assert (project / "schema" / NEW / "schema.json").read_bytes() == vendored.read_bytes()
    pins = json.loads((project / "schema" / "PINNED.json").read_text(encoding="utf-8"))
    assert [p["version"] for p in pins["schemas"]][-2:] == [NEW, "draft"]
    entry = pins["schemas"][-2]
    assert entry["sha256"] == hashlib.sha256(vendored.read_bytes()).hexdigest()
    assert entry["bytes"] == len(vendored.read_bytes()) and entry["commit"] == COMMIT

    # The intake record: digests added for the new version, none of the old ones changed.
    old_record = json.loads((ROOT / "tests/fixtures/intake_reference.json").read_text())
    new_record = json.loads((project / "tests/fixtures/intake_reference.json").read_text())
    assert {v: new_record[v] for v in old_record} == old_record
    assert set(new_record) - set(old_record) == {NEW}

    # The renamed union kept its tag; the new block type is a tagged arm.
    text = (project / "generated" / "conduit_mcp_wire" / f"{module}.py").read_text()
    assert "/$defs/ElicitationParams: by mode (member)" in text
    assert 'Discriminator(MemberTag("mode"' in text and "VideoContent" in text

    # The checklist, as printed.
    checklist = done.stdout.split(f"Checklist for {NEW}", 1)[1]
    assert "[decide] renamed definition ElicitRequestParams -> ElicitationParams" in checklist
    assert '[decide] new content block type "video"' in checklist
    assert '"trace"' in checklist and "Tool.deprecated" in checklist
    assert "CallToolResult.elapsedMs" in checklist

    # The copy's tests pass with no edit; the block-type test fails until the decision...
    def pytest_in_copy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    ran = pytest_in_copy(*AFTER_BUMP)
    assert ran.returncode == 0, ran.stdout[-3000:]
    blocks = pytest_in_copy("tests/llm/test_block_types.py")
    assert blocks.returncode == 1 and "'video': 'VideoContent'" in blocks.stdout
    # ... which is one line of src/conduit_mcp/llm/_shape.py.
    shape = project / "src" / "conduit_mcp" / "llm" / "_shape.py"
    code = shape.read_text(encoding="utf-8")
    decided = code.replace(
        "OMITTED_BLOCK_TYPES: Final[frozenset[str]] = frozenset()",
        'OMITTED_BLOCK_TYPES: Final[frozenset[str]] = frozenset({"video"})',
    )
    assert decided != code
    shape.write_text(decided, encoding="utf-8")
    assert pytest_in_copy("tests/llm/test_block_types.py").returncode == 0

    # The client knows the version: the spec's InputRequiredResult example conforms as a
    # tools/call answer there (issue 31: it was a violation), and the fast path has it.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            "from pathlib import Path\n"
            "from conduit_mcp.client import is_conformant, KNOWN_VERSIONS\n"
            "from conduit_mcp.guard._sdkfast import _MEMBERS\n"
            "v = sys.argv[1]\n"
            "ex = sorted(Path(f'schema/{v}/examples/InputRequiredResult').glob('*.json'))\n"
            "ok = [is_conformant(json.loads(p.read_text()), kind='call_result',"
            " protocol_version=v) for p in ex]\n"
            "print(json.dumps([v in KNOWN_VERSIONS, bool(ok) and all(ok), v in _MEMBERS]))\n",
            NEW,
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert json.loads(probe.stdout) == [True, True, True], probe.stderr
