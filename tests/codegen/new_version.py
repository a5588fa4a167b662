"""A made-up next spec version with the changes a real bump brings (issue 31), for the bump tests.

conduit-defined: the newest pinned dated schema, changed the way a spec revision changes it:
a new optional member on `Tool` (`deprecated`) and on `CallToolResult` (`elapsedMs`), a new
content block type (`VideoContent`, `type: "video"`) in `ContentBlock`, one renamed definition
(`ElicitRequestParams` -> `ElicitationParams`, a union tagged by `mode`), and a new
`LoggingLevel` value (`trace`). `write(folder)` writes it as the spec repository lays a version
out: `schema.json` and `examples/` (the previous version's examples, a video block's, and the
renamed definition's folder renamed).

Usage (the demo bump of schema/README.md's recipe):
    python -m tests.codegen.new_version /tmp/next     # writes /tmp/next/schema.json, examples/
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The rename the made-up version carries: old definition name -> new.
RENAMED = ("ElicitRequestParams", "ElicitationParams")

#: What the checklist of a bump to this version must name (worked out from the changes above,
#: not from the tool's output).
NEW_BLOCK_TYPE = ("VideoContent", "video")
NEW_LOGGING_LEVEL = "trace"
NEW_TOOL_MEMBER = "deprecated"
NEW_RESULT_MEMBER = "elapsedMs"


def base_version() -> str:
    """The newest dated version of schema/PINNED.json (the one the made-up version follows)."""
    pins = json.loads((ROOT / "schema" / "PINNED.json").read_text(encoding="utf-8"))
    return [p["version"] for p in pins["schemas"] if p["version"] != "draft"][-1]


def _renamed_refs(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {
            k: (
                f"#/$defs/{new}"
                if k == "$ref" and v == f"#/$defs/{old}"
                else _renamed_refs(v, old, new)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_renamed_refs(v, old, new) for v in node]
    return node


def make_schema(base: dict[str, Any]) -> dict[str, Any]:
    """The made-up version's schema, built from `base` (a 2020-12 schema with `$defs`)."""
    schema = copy.deepcopy(base)
    defs = schema["$defs"]
    defs["Tool"]["properties"][NEW_TOOL_MEMBER] = {
        "description": "Whether the server plans to remove this tool.",
        "type": "boolean",
    }
    defs["CallToolResult"]["properties"][NEW_RESULT_MEMBER] = {
        "description": "How long the call took on the server, in milliseconds.",
        "type": "integer",
    }
    video = copy.deepcopy(defs["AudioContent"])
    video["description"] = "A video provided to or from an LLM."
    video["properties"]["data"]["description"] = "The base64-encoded video data."
    video["properties"]["type"] = {"const": NEW_BLOCK_TYPE[1], "type": "string"}
    video["properties"]["durationMs"] = {"type": "integer"}
    defs[NEW_BLOCK_TYPE[0]] = video
    defs["ContentBlock"]["anyOf"].append({"$ref": f"#/$defs/{NEW_BLOCK_TYPE[0]}"})
    defs["LoggingLevel"]["enum"].append(NEW_LOGGING_LEVEL)
    old, new = RENAMED
    schema["$defs"] = {(new if k == old else k): v for k, v in defs.items()}
    return _renamed_refs(schema, old, new)  # type: ignore[no-any-return]


def write(folder: Path, base: str | None = None) -> Path:
    """Write the made-up version's `schema.json` and `examples/` into `folder`; return the
    schema's path. The bytes are those of `json.dumps(indent=2)`, as the spec repository's."""
    base = base or base_version()
    source = ROOT / "schema" / base
    folder.mkdir(parents=True, exist_ok=True)
    schema = make_schema(json.loads((source / "schema.json").read_text(encoding="utf-8")))
    path = folder / "schema.json"
    path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    examples = folder / "examples"
    if examples.exists():
        shutil.rmtree(examples)
    shutil.copytree(source / "examples", examples)
    old, new = RENAMED
    if (examples / old).is_dir():
        (examples / old).rename(examples / new)
    video = examples / NEW_BLOCK_TYPE[0]
    video.mkdir()
    block = {"type": NEW_BLOCK_TYPE[1], "data": "AAAAIGZ0eXBpc29t", "mimeType": "video/mp4"}
    (video / "video-mp4-content.json").write_text(json.dumps(block, indent=2) + "\n")
    return path


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
