"""`make bump`: vendor a new MCP spec version, pin it, regenerate, and say what a person decides.

Steps, each refusing with one line (the file and the JSON Pointer) before anything is written:
check the arguments and the schema (JSON, definitions, every `$ref`) -> copy `schema.json` byte
for byte (and `examples/`) into schema/<version>/ -> insert its entries into schema/PINNED.json
(`schemas` before `draft`, `examples` in version order: sha256, bytes, git blob, source commit)
-> regenerate generated/conduit_mcp_wire/ (codegen/generate.py; on a refusal the new folder and
the PINNED.json edit are undone and generated/ is untouched) -> record the new version's intake
digests (tests/fixtures/intake_reference.json: added, none changed) -> print the conformance
summary -> print the checklist: the structural diff against the previous dated version
(codegen/schemadiff.py), each line naming where the decision is made.

Usage (from the project root; or `make bump VERSION=... SCHEMA=... [EXAMPLES=...]
[SOURCE_COMMIT=...]`):
    python codegen/bump.py --version 2027-01-26 \
        --schema ../modelcontextprotocol/schema/2027-01-26/schema.json \
        [--examples ../modelcontextprotocol/schema/2027-01-26/examples] [--source-commit SHA]

Exit status: 0 done (the checklist may still hold decisions), 1 the conformance summary found a
disagreement (the files stay written: look at the summary), 2 refused (nothing changed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate
import schemadiff
from jsonfile import InputError, load_json_bytes

ROOT = generate.ROOT

#: The spec repository a pin names when the previous pins name none.
SPEC_REPO = "github.com/modelcontextprotocol/modelcontextprotocol"


class BumpError(Exception):
    """The bump is refused; the message is one line naming the file (and the pointer)."""


def git_blob(data: bytes) -> str:
    """`git hash-object` of `data`: sha1 over `blob <size>\\0` and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _source_commit(schema: Path, given: str | None) -> str:
    """The spec commit the schema comes from: `given`, else the HEAD of the git clone holding
    the file when the file is unchanged there.

    Raises:
        BumpError: `given` is not 40 hex digits, or there is no clean clone to read it from.
    """
    if given:
        if not re.fullmatch(r"[0-9a-f]{40}", given):
            raise BumpError(f"SOURCE_COMMIT={given}: not a 40-hex-digit git commit")
        return given
    folder = schema.resolve().parent
    head = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(folder), "status", "--porcelain", "--", schema.name],
        capture_output=True,
        text=True,
    )
    if head.returncode != 0 or dirty.returncode != 0 or dirty.stdout.strip():
        raise BumpError(
            f"{schema}: not an unchanged file of a git clone of the spec repository;"
            " give SOURCE_COMMIT=<the spec commit it comes from>"
        )
    return head.stdout.strip()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def check_arguments(
    version: str, schema: Path, examples: Path | None, registry: generate.Registry
) -> tuple[bytes, dict[str, Any]]:
    """Refuse a bump that cannot be right, before anything is written.

    Returns:
        The schema's bytes and its parsed value.

    Raises:
        BumpError: VERSION not a date later than every pinned one, already vendored, SCHEMA or
            EXAMPLES unreadable, the schema not JSON / without definitions / with a dangling
            `$ref` (the `$ref`'s pointer).
    """
    if not generate._is_date(version):
        raise BumpError(f"VERSION={version}: not a YYYY-MM-DD date")
    dated = [v for v in registry.versions if v != generate.DRAFT]
    if version in registry.versions or (generate.SCHEMA_DIR / version).exists():
        raise BumpError(f"schema/{version}/: already vendored or pinned; a bump adds a new version")
    if version < dated[-1]:
        raise BumpError(
            f"VERSION={version}: older than the latest pinned version {dated[-1]}; a bump adds"
            " the next release"
        )
    try:
        data = schema.read_bytes()
    except OSError as exc:
        raise BumpError(f"SCHEMA={schema}: cannot read: {exc.strerror or exc}") from None
    if examples is not None and not examples.is_dir():
        raise BumpError(f"EXAMPLES={examples}: not a folder")
    try:
        parsed = generate.check_schema(data, str(schema))
    except generate.GenerationError as exc:
        raise BumpError(str(exc)) from None
    return data, parsed


def pin_entries(
    pins: dict[str, Any], version: str, data: bytes, commit: str, examples: int | None
) -> dict[str, Any]:
    """schema/PINNED.json with the new version's entries inserted (release order: before
    `draft`; examples in the order of `schemas`)."""
    pins = json.loads(json.dumps(pins))
    schemas = pins["schemas"]
    template = next((p for p in reversed(schemas) if p.get("version") != generate.DRAFT), {})
    entry = {
        "version": version,
        "source_repo": template.get("source_repo", SPEC_REPO),
        "source_path": f"schema/{version}/schema.json",
        "commit": commit,
        "git_blob": git_blob(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "local_path": f"{version}/schema.json",
    }
    at = next((i for i, p in enumerate(schemas) if p.get("version") == generate.DRAFT), None)
    schemas.insert(len(schemas) if at is None else at, entry)
    if examples is not None:
        order = [p["version"] for p in schemas]
        listed = pins.setdefault("examples", [])
        new = {
            "version": version,
            "source_path": f"schema/{version}/examples/",
            "local_path": f"{version}/examples/",
            "files": examples,
        }
        after = [
            i for i, e in enumerate(listed) if order.index(e["version"]) < order.index(version)
        ]
        listed.insert(after[-1] + 1 if after else 0, new)
    return pins


def _write_pins(pins: dict[str, Any]) -> None:
    # The file's own layout: two-space indent, no newline at the end.
    generate.PIN_FILE.write_text(json.dumps(pins, indent=2), encoding="utf-8")


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, env=env, check=False
    )


def _env() -> dict[str, str]:
    """The project's own packages first (a temporary copy of the project runs its own)."""
    paths = [str(ROOT / "src"), str(ROOT / "generated"), str(ROOT)]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([old] if old else [])])}


def bump(
    version: str, schema: Path, examples: Path | None, source_commit: str | None
) -> tuple[int, list[str]]:
    """Run the whole bump (see the module docstring); print as it goes.

    Returns:
        (exit status, the checklist lines).

    Raises:
        BumpError: refused; nothing was changed (or the changes were undone).
    """
    registry = generate.read_registry()
    data, parsed = check_arguments(version, schema, examples, registry)
    commit = _source_commit(schema, source_commit)
    pin_bytes = generate.PIN_FILE.read_bytes()
    try:
        pins = load_json_bytes(pin_bytes, "schema/PINNED.json")
    except InputError as exc:
        raise BumpError(str(exc)) from None
    target = generate.SCHEMA_DIR / version
    count = len(_files(examples)) if examples is not None else None
    previous = [v for v in registry.versions if v != generate.DRAFT][-1]

    # Vendor and pin; undone if the generator refuses.
    written: list[str] = []
    try:
        target.mkdir()
        (target / "schema.json").write_bytes(data)
        if examples is not None:
            shutil.copytree(examples, target / "examples")
        _write_pins(pin_entries(pins, version, data, commit, count))
        print(
            f"vendored schema/{version}/schema.json ({len(data):,} bytes, sha256"
            f" {hashlib.sha256(data).hexdigest()[:16]}…)"
            + (f" and examples/ ({count} files)" if count is not None else "")
            + f"; pinned in schema/PINNED.json (commit {commit[:12]})"
        )
        jobs = generate.prepare(generate.read_registry(), generate.tool_versions())
        with tempfile.TemporaryDirectory(prefix="conduit-bump-") as tmp:
            files = generate.build(Path(tmp), jobs)
    except (generate.GenerationError, BumpError) as exc:
        shutil.rmtree(target, ignore_errors=True)
        generate.PIN_FILE.write_bytes(pin_bytes)
        raise BumpError(str(exc)) from None
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        generate.PIN_FILE.write_bytes(pin_bytes)
        raise
    before = {p.name: p.read_text(encoding="utf-8") for p in generate.OUTPUT_DIR.glob("*.py")}
    generate.write(files)
    written = [
        f"generated/conduit_mcp_wire/{name}"
        for name, text in sorted(files.items())
        if before.get(name) != text and name.endswith(".py")
    ]
    print(f"regenerated: {', '.join(written)} (the other modules unchanged)")

    # Intake digests of the new version (and of the new spec examples at every version).
    record = _run(["-m", "tests.client.intake_outcomes", "--add"], _env())
    if record.returncode != 0:
        print(record.stderr.strip().splitlines()[-1] if record.stderr else "", file=sys.stderr)
        print("error: tests/fixtures/intake_reference.json: recording failed", file=sys.stderr)
        return 1, []
    print(record.stdout.strip())

    summary = _run(["tests/conformance/summary.py"], _env())
    print(summary.stdout.rstrip())
    if summary.stderr.strip():
        print(summary.stderr.rstrip(), file=sys.stderr)

    old_schema = generate.check_schema(
        (generate.SCHEMA_DIR / previous / "schema.json").read_bytes(), f"schema/{previous}"
    )
    job = next(j for j in jobs if j.version == version)
    key = generate.defs_key(job.pruned)
    modelled = set(job.pruned[key])
    tagged = {t.site.pointer: t.describe().split(": ", 1)[1] for t in job.tagged}
    lines = schemadiff.checklist(
        schemadiff.diff(old_schema, parsed), version, previous, modelled, tagged
    )
    print()
    print(f"Checklist for {version} (structural diff against {previous}):")
    for line in lines:
        print(f"  {line}")
    changed = [
        f"schema/{version}/schema.json",
        *([f"schema/{version}/examples/ ({count} files)"] if count is not None else []),
        "schema/PINNED.json",
        *written,
        "tests/fixtures/intake_reference.json",
    ]
    print()
    print("Files changed: " + ", ".join(changed))
    print("Then: make test (and `git diff generated/` shows only the new module and the index).")
    return (1 if summary.returncode != 0 else 0), lines


def main(argv: list[str] | None = None) -> int:
    """`make bump`; returns the exit status (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the new spec version, YYYY-MM-DD")
    parser.add_argument("--schema", required=True, type=Path, help="the spec's schema.json")
    parser.add_argument("--examples", type=Path, help="the spec's examples/ folder of it")
    parser.add_argument("--source-commit", help="the spec repository commit (40 hex digits)")
    args = parser.parse_args(argv)
    try:
        status, _ = bump(args.version, args.schema, args.examples, args.source_commit)
    except (BumpError, generate.GenerationError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
