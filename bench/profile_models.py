"""Where a generated `Tool.model_validate` spends its instructions, next to `mcp_types.Tool`'s.

`.venv/bin/python bench/profile_models.py [--before REV] [--out FILE]` counts, under callgrind
(`bench/callgrind_segments.py`; figures the machine's load cannot move), the CPU instructions per
tool of `Tool.model_validate` at every spec version on the real corpus tools both accept (row 10's
inputs), for the generated package at REV (default `e1273a2`, before issue 33), as it is now, and
for variants of today's package, each without one of the things the models do beyond the peer:

- `pydantic's model_validate`: pydantic's Python wrapper instead of the compiled validator's own
  method (`WireModel`, codegen/README.md);
- `JSON objects unchecked`: `inputSchema` / `outputSchema` / `_meta` read as `Any` (no check of
  the members the schema declares, no copy): the floor of `AsDict`;
- `unknown members dropped`: `extra="ignore"` on every model (what the peer does);
- `both`: the two together, the models' floor as pydantic builds them;

and the peer, `mcp_types.Tool.model_validate`, with and without its own Python wrapper. Each
variant is the generated package copied to a temporary folder and patched there; nothing in the
checkout changes. Prints (and with `--out` writes) a table per version. Takes a few minutes.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Passes over the tools counted per candidate (after one warm-up pass).
REPEATS = 2
#: The revision before issue 33's changes to the generated models.
BEFORE = "e1273a2"

_DROP_WRAPPER = """
del WireModel.model_validate, WireModel.model_validate_json  # profile: pydantic's wrapper
"""
_UNCHECKED = """
def _any_schema(self: Any, source: Any, handler: Any) -> Any:  # profile: no check, no copy
    return core_schema.any_schema()


AsDict.__get_pydantic_core_schema__ = _any_schema  # type: ignore[method-assign]
"""

#: Variant name -> (text appended to _base.py, whether `extra="allow"` becomes `"ignore"`).
VARIANTS: dict[str, tuple[str, bool]] = {
    "pydantic's model_validate": (_DROP_WRAPPER, False),
    "JSON objects unchecked": (_UNCHECKED, False),
    "unknown members dropped": ("", True),
    "both": (_UNCHECKED, True),
}


def _variant(source: Path, into: Path, appended: str, ignore_extras: bool) -> Path:
    """A copy of the package at `source` in `into`/conduit_mcp_wire, patched; returns `into`."""
    package = into / "conduit_mcp_wire"
    shutil.copytree(source, package)
    if appended:
        base = package / "_base.py"
        base.write_text(base.read_text(encoding="utf-8") + appended, encoding="utf-8")
    if ignore_extras:
        for module in package.glob("*.py"):
            text = module.read_text(encoding="utf-8")
            module.write_text(text.replace("extra='allow'", "extra='ignore'"), encoding="utf-8")
    return into


def _before(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "generated/conduit_mcp_wire"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "generated" / "conduit_mcp_wire").rename(into / "conduit_mcp_wire")
    return into


def _child(inputs: str, with_peer: bool) -> None:
    """The callgrind child: every version's generated Tool (then the peer's two ways)."""
    import mcp_types
    from conduit_mcp_wire import module_for

    from bench.callgrind_segments import mark

    tools = json.loads(Path(inputs).read_text(encoding="utf-8"))
    work = [(module_for(v).Tool.model_validate, batch) for v, batch in tools.items()]
    if with_peer:  # the peer on each version's own tools (the sets differ by a tool or two)
        for batch in tools.values():
            work.append((mcp_types.Tool.model_validate, batch))
            work.append((mcp_types.Tool.__pydantic_validator__.validate_python, batch))
    for validate, batch in work:
        built = [validate(tool) for tool in batch]
    del built
    gc.collect()  # as the timed rows: the collector off (it would run in any segment)
    gc.disable()
    mark()
    for validate, batch in work:
        for _ in range(REPEATS):  # as the timed row: every model kept until the pass ends
            built = [validate(tool) for tool in batch]
            del built
        mark()


def _count(path: Path, inputs: Path, versions: list[str], with_peer: bool) -> dict[str, int]:
    from bench.callgrind_segments import count

    labels = list(versions)
    if with_peer:
        labels += [f"{who} {v}" for v in versions for who in ("peer", "peer validate_python")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    script = [sys.executable, "-P", __file__, "--child", str(inputs), str(int(with_peer))]
    return count(script, labels, env)


def main(argv: list[str] | None = None) -> int:
    """Count every variant; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the revision to compare (git)")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1] == "1")
        return 0
    from bench import run as bench

    versions = list(bench.GENERATED_VERSIONS)
    tools = {v: bench.generated_tool_inputs(v) for v in versions}
    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "tools.json"
        inputs.write_text(json.dumps(tools), encoding="utf-8")
        source = ROOT / "generated" / "conduit_mcp_wire"
        paths = {
            f"before ({args.before})": _before(args.before, Path(tmp) / "before"),
            "now": source.parent,
        }
        for name, (appended, ignore) in VARIANTS.items():
            paths[name] = _variant(source, Path(tmp) / name.replace(" ", "_"), appended, ignore)
        for name, path in paths.items():
            counts[name] = _count(path, inputs, versions, with_peer=name == "now")
    per_tool = {
        name: {
            label: value / (REPEATS * len(tools[label.rsplit(" ", 1)[-1]]))
            for label, value in found.items()
        }
        for name, found in counts.items()
    }
    text = _table(per_tool, versions, {v: len(t) for v, t in tools.items()})
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def _table(
    per_tool: dict[str, dict[str, float]], versions: list[str], sizes: dict[str, int]
) -> str:
    now = per_tool["now"]
    peer = {v: now[f"peer {v}"] for v in versions}
    wrapper = {v: now[f"peer {v}"] - now[f"peer validate_python {v}"] for v in versions}
    lines = [
        "CPU instructions per tool of Tool.model_validate (callgrind; python "
        f"{sys.version.split()[0]}); ratio = mcp_types.Tool.model_validate / this on the same "
        "tools (above 1: faster than the peer).",
        "",
        "| generated package | " + " | ".join(f"{v} ({sizes[v]} tools)" for v in versions) + " |",
        "|---|" + "---:|" * len(versions),
        "| peer: mcp_types.Tool.model_validate | "
        + " | ".join(f"{peer[v]:,.0f}" for v in versions)
        + " |",
        "| of which pydantic's Python wrapper | "
        + " | ".join(f"{wrapper[v]:,.0f}" for v in versions)
        + " |",
    ]
    for name, found in per_tool.items():
        cells = [f"{found[v]:,.0f} ({peer[v] / found[v]:.2f}x)" for v in versions]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
