"""The benchmark's fixed, seeded workload, built from the real captures in tests/fixtures.

Every builder is deterministic for a given seed: the same call gives the same objects (and the
same JSON bytes) on every machine, so runs can be compared. Nothing here is timed.

Sources (see tests/fixtures/corpus/SOURCES.md for provenance):

* tools: every captured tool definition (`tests.corpus.all_tools()`, ~1,040 from 50
  `tools/list` pages of 20 servers, the spec examples included), replicated and varied.
* results: every captured `tools/call` result except the 2026-07-28 `InputRequiredResult`s
  (they are not `CallToolResult`s), replicated and varied.
* structured pairs (tool with `outputSchema`, result with `structuredContent`): the real pairs in
  the corpus (server-filesystem, server-memory, server-everything, mcp-server-time,
  server-sequential-thinking), the 2026-07-28 spec examples, and synthetic instances generated
  from every distinct real `outputSchema` (kept only when `jsonschema` says they conform).
"""

from __future__ import annotations

import copy
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import corpus  # noqa: E402  (the repo root must be importable first)

#: The seed of every builder unless the caller passes another.
SEED = 20261129

SPEC_EXAMPLES = ROOT / "schema" / "2026-07-28" / "examples"

#: (Tool example, CallToolResult example) pairs in the 2026-07-28 spec examples.
SPEC_PAIRS = (
    (
        "Tool/with-output-schema-for-structured-content.json",
        "CallToolResult/result-with-structured-content.json",
    ),
    (
        "Tool/tool-with-array-output-schema.json",
        "CallToolResult/result-with-array-structured-content.json",
    ),
)

JSONObject = dict[str, Any]


def _dumps(value: Any) -> bytes:
    # The standard library keeps integers of any size (orjson refuses beyond 64 bits).
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _copy(value: Any) -> Any:
    # A JSON round trip is an exact deep copy of a JSON value, several times faster than
    # copy.deepcopy; orjson refuses integers beyond 64 bits, which deepcopy then handles.
    try:
        return orjson.loads(orjson.dumps(value))
    except (orjson.JSONEncodeError, orjson.JSONDecodeError):
        return copy.deepcopy(value)


def _shuffled_keys(obj: JSONObject, rng: random.Random) -> JSONObject:
    # Wire member order is arbitrary: a fingerprint must not depend on it.
    items = list(obj.items())
    rng.shuffle(items)
    return dict(items)


# -- tools -----------------------------------------------------------------------------------


def base_tools() -> list[JSONObject]:
    """Every captured tool definition that is an object, in corpus order.

    These are the corpus loader's own (cached) objects: never mutate them (`vary_tool` copies).
    """
    return [raw for _, _, raw in corpus.all_tools() if isinstance(raw, dict)]


def vary_tool(raw: JSONObject, k: int, rng: random.Random) -> JSONObject:
    """Variant `k` of a tool: unique name (`<name>_v<k>`), a varied description, shuffled keys.

    The name stays within the spec's charset (`_` and digits are allowed), so variants are
    accepted by intake exactly when the original is; every variant has its own fingerprint.
    """
    tool = _copy(raw)
    name = tool.get("name")
    if isinstance(name, str):
        tool["name"] = f"{name}_v{k}"
    description = tool.get("description")
    if isinstance(description, str):
        tool["description"] = f"{description} (build {rng.randrange(1_000_000):06d})"
    return _shuffled_keys(tool, rng)


def tools(n: int, seed: int = SEED) -> list[JSONObject]:
    """`n` tool definitions: the corpus in a seeded order, cycled and varied (all names unique)."""
    rng = random.Random(seed)
    pool = base_tools()
    rng.shuffle(pool)
    return [vary_tool(pool[k % len(pool)], k, rng) for k in range(n)]


def page_bytes(tools: list[JSONObject]) -> bytes:
    """The JSON bytes of one `tools/list` result holding `tools` (compact, UTF-8)."""
    return _dumps({"tools": tools})


def tools_page(n: int, seed: int = SEED) -> bytes:
    """The JSON bytes of one `tools/list` result holding `n` tools (compact, UTF-8)."""
    return page_bytes(tools(n, seed))


# -- results ---------------------------------------------------------------------------------


def base_results() -> list[JSONObject]:
    """Every captured `CallToolResult` (InputRequiredResults left out); never mutate them."""
    return [
        c.data
        for c in corpus.results()
        if isinstance(c.data, dict) and c.data.get("resultType") != "input_required"
    ]


def vary_result(raw: JSONObject, k: int, rng: random.Random) -> JSONObject:
    """Variant `k` of a result: each text block's text gets a suffix; keys shuffled.

    `structuredContent` is left as sent (it must still match its tool's outputSchema).
    """
    result = _copy(raw)
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"] += f" [#{k}.{rng.randrange(1000)}]"
    return _shuffled_keys(result, rng)


def results(n: int, seed: int = SEED) -> list[JSONObject]:
    """`n` `CallToolResult` objects: the corpus results in a seeded order, cycled and varied."""
    rng = random.Random(seed + 1)
    pool = base_results()
    rng.shuffle(pool)
    return [vary_result(pool[k % len(pool)], k, rng) for k in range(n)]


# -- structured pairs ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """A tool with an `outputSchema` and a result with `structuredContent` for it."""

    origin: str  # "corpus", "spec-example" or "synthetic"
    tool: JSONObject
    result: JSONObject

    @property
    def schema(self) -> JSONObject:
        """The tool's outputSchema."""
        schema: JSONObject = self.tool["outputSchema"]
        return schema

    @property
    def instance(self) -> Any:
        """The result's structuredContent."""
        return self.result["structuredContent"]


def _corpus_pairs() -> list[Pair]:
    index = json.loads((corpus.CORPUS / "index.json").read_text(encoding="utf-8"))
    params_by_file = {entry["file"]: entry.get("params") for entry in index["files"]}
    by_name: dict[tuple[str, str], JSONObject] = {}
    for capture, _, raw in corpus.all_tools():
        if isinstance(raw, dict) and isinstance(raw.get("outputSchema"), dict):
            by_name.setdefault((capture.source, raw["name"]), raw)
    pairs = []
    for capture in corpus.results():
        data = capture.data
        if "structuredContent" not in data or data.get("isError") is True:
            continue
        params = params_by_file.get(capture.file)
        name = params.get("name") if isinstance(params, dict) else None
        tool = by_name.get((capture.source, name)) if isinstance(name, str) else None
        if tool is not None:
            pairs.append(Pair("corpus", copy.deepcopy(tool), copy.deepcopy(data)))
    return pairs


def _spec_pairs() -> list[Pair]:
    pairs = []
    for tool_file, result_file in SPEC_PAIRS:
        tool = json.loads((SPEC_EXAMPLES / tool_file).read_text(encoding="utf-8"))
        result = json.loads((SPEC_EXAMPLES / result_file).read_text(encoding="utf-8"))
        pairs.append(Pair("spec-example", tool, result))
    return pairs


def _resolve(schema: Any, root: JSONObject) -> Any:
    # Local refs only ("#/$defs/X", "#/definitions/X"); anything else is left as is.
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            node = (
                node.get(part.replace("~1", "/").replace("~0", "~"), {})
                if isinstance(node, dict)
                else {}
            )
        schema, seen = node, seen + 1
    return schema


def synth_instance(schema: Any, rng: random.Random, root: JSONObject, depth: int = 0) -> Any:
    """A pseudo-random JSON value meant to conform to `schema` (callers check it does).

    Covers what real output schemas use: `type` (and type lists), `properties`/`required`,
    `items`, `enum`, `const`, `anyOf`/`oneOf` (one branch), `additionalProperties` and local
    `$ref`. Recursion is bounded by `depth` (bench-only helper; schemas are small).
    """
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return copy.deepcopy(rng.choice(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return synth_instance(rng.choice(branches), rng, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [k for k in schema.get("required", []) if isinstance(k, str)]
        obj: JSONObject = {}
        for key, sub in properties.items():
            if key in required or rng.random() < 0.6:
                obj[key] = synth_instance(sub, rng, root, depth + 1)
        for key in required:
            obj.setdefault(key, "x")
        if not properties and schema.get("additionalProperties") is not False:
            for i in range(rng.randrange(4)):
                obj[f"k{i}"] = rng.choice([rng.randrange(100), f"v{rng.randrange(100)}", True])
        return obj
    if kind == "array":
        items = schema.get("items")
        count = rng.randrange(5)
        return [
            synth_instance(items if isinstance(items, dict) else {}, rng, root, depth + 1)
            for _ in range(count)
        ]
    if kind == "integer":
        return rng.randrange(-1000, 1000)
    if kind == "number":
        return round(rng.uniform(-1000, 1000), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return "".join(rng.choice("abcdefghij ") for _ in range(rng.randrange(1, 24)))


def _synthetic_pairs(rng: random.Random, per_schema: int) -> list[Pair]:
    from jsonschema import validators  # type: ignore[import-untyped]

    seen: set[bytes] = set()
    pairs = []
    for _, _, raw in corpus.all_tools():
        schema = raw.get("outputSchema") if isinstance(raw, dict) else None
        if not isinstance(schema, dict):
            continue
        key = json.dumps(schema, sort_keys=True).encode()
        if key in seen:
            continue
        seen.add(key)
        validator = validators.validator_for(schema)(schema)
        for _ in range(per_schema):
            instance = synth_instance(schema, rng, schema)
            if validator.is_valid(instance):
                result = {
                    "content": [{"type": "text", "text": json.dumps(instance)}],
                    "structuredContent": instance,
                }
                pairs.append(Pair("synthetic", copy.deepcopy(raw), result))
    return pairs


def structured_pairs(n: int, seed: int = SEED, per_schema: int = 3) -> list[Pair]:
    """`n` (tool, result) pairs with outputSchema and structuredContent, cycled from the pool.

    The pool: real corpus pairs, the spec-example pairs, then `per_schema` synthetic instances
    per distinct real outputSchema; shuffled with the seed.
    """
    rng = random.Random(seed + 2)
    pool = _corpus_pairs() + _spec_pairs() + _synthetic_pairs(rng, per_schema)
    rng.shuffle(pool)
    return [pool[k % len(pool)] for k in range(n)]


def pool_summary(seed: int = SEED) -> dict[str, int]:
    """Counts of the distinct source objects behind the workload (for the report)."""
    pairs = _corpus_pairs() + _spec_pairs() + _synthetic_pairs(random.Random(seed + 2), 3)
    return {
        "tools": len(base_tools()),
        "results": len(base_results()),
        "pairs_corpus": sum(p.origin == "corpus" for p in pairs),
        "pairs_spec_example": sum(p.origin == "spec-example" for p in pairs),
        "pairs_synthetic": sum(p.origin == "synthetic" for p in pairs),
        "distinct_output_schemas": len({_dumps(p.schema) for p in pairs}),
    }
