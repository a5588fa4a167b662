"""Generate `generated/conduit_mcp_wire/` from the pinned MCP schemas.

Steps: `read_registry` (the versions and their order, from schema/PINNED.json) -> `load_pinned`
(refuse a schema whose sha256 is not its pin) -> `patch_schema` (codegen/patches.py, each patch
checking its old value) -> `prune` (keep the definitions reachable from the roots, in file order)
-> `run_codegen` (datamodel-code-generator, pinned, with the naming table codegen/names.json;
then codegen/postprocess.py, with the `ToolsCallResult` alias from templates/answers.py.jinja)
-> header, package index and the `WireModel` base class from codegen/templates/ -> write, or
compare with `--check`. Which property of the models comes from which of these, and why:
codegen/README.md.

schema/PINNED.json is the one version registry: the generated `conduit_mcp_wire.VERSIONS` and
`LATEST` come from it, and `conduit_mcp.client` takes them from `conduit_mcp_wire`. The bump recipe
is in schema/README.md.

Usage:
    python codegen/generate.py            # regenerate generated/conduit_mcp_wire/
    python codegen/generate.py --check    # regenerate into a temp folder; exit 1 on any drift
"""

from __future__ import annotations

import argparse
import copy
import difflib
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from patches import MISSING, PATCHES, Patch
from postprocess import PostprocessError, nullable_optional_members, postprocess
from tagged_unions import Rewrite, TaggingError
from tagged_unions import derive as derive_tagged_unions

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
PIN_FILE = SCHEMA_DIR / "PINNED.json"
OUTPUT_DIR = ROOT / "generated" / "conduit_mcp_wire"
TEMPLATES = Path(__file__).resolve().parent / "templates"
NAMES = Path(__file__).resolve().parent / "names.json"

# -- knobs -----------------------------------------------------------------------------------

#: The unreleased next revision's folder name; the only pinned version that is not a date.
DRAFT = "draft"

#: The definitions a client takes off the wire for tools, and the envelopes whose spec examples
#: the conformance tests round-trip (each root is used where the version defines it).
ROOTS = (
    "Tool",
    "CallToolResult",
    "ListToolsResult",
    "CallToolResultResponse",
    "ListToolsResultResponse",
    # The other answers to tools/call (`ToolsCallResult`, templates/answers.py.jinja).
    "InputRequiredResult",
    "CreateTaskResult",
)

#: The definitions that answer tools/call, in the order `ToolsCallResult` lists those a version
#: has (basic "Result types" at 2026-07-28; task-augmented calls at 2025-11-25).
TOOLS_CALL_ANSWERS = ("CallToolResult", "InputRequiredResult", "CreateTaskResult")

DCG_ARGS = (
    "--input-file-type=jsonschema",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.10",
    # Unknown keys are data: `ignore` would silently strip whole inputSchemas.
    "--extra-fields=allow",
    # PEP 8 attributes, wire names as aliases (`input_schema` / `inputSchema`, `meta` / `_meta`,
    # `schema_` / `$schema`), as mcp_types does; WireModel (templates/_base.py.jinja) accepts
    # either name on construction and only wire names from the wire.
    "--snake-case-field",
    "--remove-special-field-name-prefix",
    "--base-class=conduit_mcp_wire._base.WireModel",
    "--use-field-description",
    "--use-schema-description",
    "--use-annotated",
    "--use-union-operator",
    # A union or a plain value type is a type alias (`ContentBlock`, `Role`, `MetaObject`), not a
    # RootModel: `result.content[0]` is the concrete block, `audience[0] == "user"` holds, and
    # `_meta` is a dict. Python 3.10 has no `type` statement, so dcg writes `TypeAliasType`.
    "--use-type-alias",
    "--use-standard-collections",
    "--enum-field-as-literal=all",
    "--keep-model-order",
    "--disable-timestamp",
    "--formatters",
    "black",
    "isort",
    # Keep byte/uri formats plain strings: Base64Str decodes (and fails on real image data),
    # AnyUrl rewrites URLs, so neither round-trips the wire bytes.
    "--type-mappings",
    "string+byte=string",
    "string+uri=string",
)


@dataclass(frozen=True)
class Pin:
    """One entry of schema/PINNED.json."""

    version: str
    source_repo: str
    source_path: str
    commit: str
    sha256: str


class GenerationError(Exception):
    """The generator refuses to run: its inputs are not what they claim to be."""


class PinMismatch(GenerationError):
    """A vendored schema's bytes do not match its pin, or a version has no pin."""


class RegistryError(GenerationError):
    """schema/PINNED.json does not list its versions as a registry must (see `read_registry`)."""


class PatchMismatch(GenerationError):
    """A patch's old value is not what the schema holds: the spec moved under the patch."""


@dataclass(frozen=True)
class Registry:
    """The versions to generate, in the order schema/PINNED.json lists them."""

    versions: tuple[str, ...]
    latest: str


# -- steps -----------------------------------------------------------------------------------


def read_registry(pin_file: Path | None = None) -> Registry:
    """Read the version registry from schema/PINNED.json (`schemas`, in file order).

    Args:
        pin_file: the pin file; `None` means `PIN_FILE`.

    Returns:
        The versions oldest first, as listed, and `latest`: the last dated version.

    Raises:
        RegistryError: no versions; a version that is neither a `YYYY-MM-DD` date nor `"draft"`;
            a version listed twice; dated versions not strictly oldest first; `"draft"` anywhere
            but last. The file order is the order, so it must already be the release order.
    """
    path = PIN_FILE if pin_file is None else pin_file
    entries = json.loads(path.read_text(encoding="utf-8")).get("schemas")
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"{path}: `schemas` must be a non-empty list of pins")
    versions = tuple(str(entry.get("version")) for entry in entries)
    dated = [v for v in versions if v != DRAFT]
    for version in dated:
        if not _is_date(version):
            raise RegistryError(f"{path}: version {version!r} is neither YYYY-MM-DD nor {DRAFT!r}")
    if len(set(versions)) != len(versions):
        raise RegistryError(f"{path}: a version is listed twice: {', '.join(versions)}")
    if dated != sorted(dated):
        listed = ", ".join(dated)
        raise RegistryError(f"{path}: dated versions must be listed oldest first: {listed}")
    if DRAFT in versions[:-1]:
        raise RegistryError(f"{path}: {DRAFT!r} must be the last version listed")
    if not dated:
        raise RegistryError(f"{path}: no released (dated) version is pinned")
    return Registry(versions=versions, latest=dated[-1])


def _is_date(version: str) -> bool:
    try:
        return date.fromisoformat(version).isoformat() == version
    except ValueError:
        return False


def load_pinned(version: str) -> tuple[Pin, dict[str, Any]]:
    """Load a vendored schema after checking its sha256 against schema/PINNED.json.

    Raises:
        PinMismatch: the file's digest differs from its pin (both digests named), or the version
            has no pin.
    """
    pins = json.loads(PIN_FILE.read_text(encoding="utf-8"))
    entry = next((p for p in pins["schemas"] if p["version"] == version), None)
    if entry is None:
        raise PinMismatch(f"{PIN_FILE}: no pin for version {version}")
    pin = Pin(
        version=version,
        source_repo=entry["source_repo"],
        source_path=entry["source_path"],
        commit=entry["commit"],
        sha256=entry["sha256"],
    )
    path = SCHEMA_DIR / version / "schema.json"
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != pin.sha256:
        raise PinMismatch(
            f"{path.relative_to(ROOT)}: sha256 {actual} does not match its pin {pin.sha256}"
            f" in {PIN_FILE.relative_to(ROOT)}; refusing to generate"
        )
    return pin, json.loads(data)


def defs_key(schema: dict[str, Any]) -> str:
    """`$defs` (2020-12 schemas) or `definitions` (draft-07 schemas)."""
    return "$defs" if "$defs" in schema else "definitions"


def _pointer_parts(pointer: str, key: str) -> list[str]:
    parts = pointer.replace("{defs}", key).split("/")[1:]
    return [p.replace("~1", "/").replace("~0", "~") for p in parts]


def patch_schema(version: str, schema: dict[str, Any]) -> tuple[dict[str, Any], list[Patch]]:
    """Apply every patch whose version range holds `version` to a copy of `schema`.

    Raises:
        PatchMismatch: a patch's range names a version that is not pinned, its parent object is
            gone, or its old value is not what the schema
            holds (the spec moved: see "Dropping a patch" in schema/README.md).
    """
    order = read_registry().versions
    schema = copy.deepcopy(schema)
    applied = []
    for patch in PATCHES:
        try:
            if not patch.applies_to(version, order):
                continue
        except ValueError as exc:
            raise PatchMismatch(f"{version}: {exc}") from None
        *parents, last = _pointer_parts(patch.pointer, defs_key(schema))
        node: Any = schema
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise PatchMismatch(f"{version}: patch {patch.pointer}: its parent object is gone")
        found = node.get(last, MISSING)
        if not (found is patch.old or found == patch.old):
            raise PatchMismatch(
                f"{version}: patch {patch.pointer} expected {_show(patch.old)},"
                f" found {_show(found)}"
            )
        if patch.new is MISSING:
            del node[last]
        else:
            node[last] = copy.deepcopy(patch.new)
        applied.append(patch)
    return schema, applied


def _show(value: Any) -> str:
    return "(absent)" if value is MISSING else repr(value)


def _refs(node: Any) -> list[str]:
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append(ref.rsplit("/", 1)[-1])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def prune(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str], int]:
    """Keep only the definitions reachable from `ROOTS`, in file order.

    Returns:
        (pruned schema, roots present in this version, total definition count).
    """
    key = defs_key(schema)
    defs = schema[key]
    roots = [r for r in ROOTS if r in defs]
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(_refs(defs[name]))
    kept = {name: value for name, value in defs.items() if name in seen}
    return {"$schema": schema["$schema"], key: kept}, roots, len(defs)


class NamingError(GenerationError):
    """An entry of codegen/names.json does not fit: bad range, or a name dcg no longer gives."""


def naming_table(version: str) -> tuple[dict[str, str], dict[str, str]]:
    """The entries of codegen/names.json for one version.

    Returns:
        (dcg class name -> our class name, `Class.wire_member` -> our attribute name), the forms
        dcg's `--model-name-map` and `--aliases` take.

    Raises:
        NamingError: an entry's range names a version that is not pinned.
    """
    table = json.loads(NAMES.read_text(encoding="utf-8"))
    order = read_registry().versions
    models: dict[str, str] = {}
    members: dict[str, str] = {}
    for kind, target, key in (("models", models, "dcg_name"), ("members", members, "member")):
        for entry in table[kind]:
            # The same inclusive range rule as a recorded patch.
            span = Patch(entry["since"], key, None, None, "", "", entry.get("until"))
            try:
                if span.applies_to(version, order):
                    target[entry[key]] = entry["name"]
            except ValueError as exc:
                raise NamingError(f"codegen/names.json: {exc}") from None
    return models, members


def run_codegen(
    pruned: dict[str, Any],
    header: str,
    workdir: Path,
    stem: str,
    answers: str,
    rewrites: list[Rewrite] | None = None,
) -> str:
    """Run datamodel-code-generator on one pruned schema; return the module source.

    Raises:
        NamingError: a class name of the naming table matched no model dcg generated.
        GenerationError: dcg failed, or the post-processing pass did not find what it expects.
    """
    source = workdir / f"{stem}.json"
    target = workdir / f"{stem}.py"
    source.write_text(json.dumps(pruned, indent=1, ensure_ascii=False), encoding="utf-8")
    models, members = naming_table(version_of(stem))
    names = workdir / f"{stem}.names.json"
    aliases = workdir / f"{stem}.aliases.json"
    names.write_text(json.dumps(models), encoding="utf-8")
    aliases.write_text(json.dumps(members), encoding="utf-8")
    cmd = [
        sys.executable,
        "-W",
        "ignore::FutureWarning",
        "-m",
        "datamodel_code_generator",
        f"--input={source}",
        f"--output={target}",
        f"--custom-file-header={header}",
        *DCG_ARGS,
        *([f"--model-name-map={names}"] if models else []),
        *([f"--aliases={aliases}"] if members else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"datamodel-codegen failed for {stem}:\n{done.stderr}")
    if "matched no generated model" in done.stderr:
        raise NamingError(
            f"{stem}: codegen/names.json names a class dcg did not generate:"
            f" {done.stderr.strip()}"
        )
    try:
        return postprocess(target.read_text(encoding="utf-8"), stem, answers, rewrites)
    except PostprocessError as exc:
        raise GenerationError(str(exc)) from None


def version_of(stem: str) -> str:
    """`v2025_06_18` -> `2025-06-18`; `draft` -> `draft` (the inverse of `module_name`)."""
    return stem if stem == DRAFT else stem[1:].replace("_", "-")


def module_name(version: str) -> str:
    """`2025-06-18` -> `v2025_06_18`; `draft` -> `draft`."""
    return version if version == DRAFT else "v" + version.replace("-", "_")


def _render(template: str, **context: Any) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["format_code"] = lambda name: f"`{name}`"
    return env.get_template(template).render(**context)


def build(workdir: Path) -> dict[str, str]:
    """Produce every output file: file name -> text."""
    tools = {
        "dcg_version": metadata.version("datamodel-code-generator"),
        "black_version": metadata.version("black"),
        "isort_version": metadata.version("isort"),
    }
    registry = read_registry()
    jobs = []
    for version in registry.versions:
        pin, schema = load_pinned(version)
        patched, applied = patch_schema(version, schema)
        pruned, roots, total = prune(patched)
        nullable = nullable_optional_members(pruned)
        if nullable:
            # postprocess.mark_not_null would refuse the null these members allow.
            raise GenerationError(f"{version}: optional members that admit null: {nullable}")
        header = _render(
            "header.py.jinja",
            version=version,
            source_repo=pin.source_repo,
            source_path=pin.source_path,
            commit=pin.commit,
            sha256=pin.sha256,
            roots=roots,
            kept=len(pruned[defs_key(pruned)]),
            total=total,
            patches=[p.pointer.replace("{defs}", defs_key(pruned)) for p in applied],
            **tools,
        ).rstrip("\n")
        arms = [name for name in TOOLS_CALL_ANSWERS if name in pruned[defs_key(pruned)]]
        answers = _render("answers.py.jinja", version=version, arms=arms)
        try:
            rewrites = derive_tagged_unions(pruned[defs_key(pruned)])
        except TaggingError as exc:
            raise GenerationError(f"{version}: {exc}") from None
        jobs.append((version, pruned, header, answers, rewrites))
    # dcg is a separate process per schema; two at a time fits the 2-core machines.
    with ThreadPoolExecutor(max_workers=2) as pool:
        sources = list(
            pool.map(
                lambda job: run_codegen(
                    job[1], job[2], workdir, module_name(job[0]), job[3], job[4]
                ),
                jobs,
            )
        )
    files = {f"{module_name(job[0])}.py": text for job, text in zip(jobs, sources, strict=True)}
    files["__init__.py"] = _render(
        "__init__.py.jinja",
        roots=ROOTS[:2],
        modules=[(v, module_name(v)) for v in registry.versions],
        latest=registry.latest,
    )
    files["_base.py"] = _render("_base.py.jinja")
    files["py.typed"] = ""
    return files


def _diff(expected: dict[str, str], out_dir: Path) -> list[str]:
    problems = []
    present = {p.name for p in out_dir.iterdir() if p.is_file()} if out_dir.exists() else set()
    for name, text in sorted(expected.items()):
        path = out_dir / name
        if not path.exists():
            problems.append(f"missing: {path.relative_to(ROOT)}")
            continue
        current = path.read_text(encoding="utf-8")
        if current != text:
            diff = difflib.unified_diff(
                current.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"committed/{name}",
                f"regenerated/{name}",
                n=2,
            )
            problems.append("".join(list(diff)[:60]))
    for name in sorted(present - set(expected)):
        problems.append(f"unexpected file: {(out_dir / name).relative_to(ROOT)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Regenerate, or with `--check` compare; return the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on any drift; write nothing")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="conduit-codegen-") as tmp:
            files = build(Path(tmp))
        registry = read_registry()
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # build() refused any schema whose digest is not its pin, so reaching here verified them all.
    print(
        f"pins verified: {len(registry.versions)} schemas match their sha256 in"
        f" {PIN_FILE.relative_to(ROOT)} ({', '.join(registry.versions)}; latest {registry.latest})"
    )
    if args.check:
        problems = _diff(files, OUTPUT_DIR)
        if problems:
            print("generated/ differs from a fresh generation:", file=sys.stderr)
            for problem in problems:
                print(problem, file=sys.stderr)
            return 1
        print(f"generated/ is up to date ({len(files)} files)")
        return 0
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    for stale in OUTPUT_DIR.glob("*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (OUTPUT_DIR / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files to {OUTPUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
