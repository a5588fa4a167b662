"""Extract the official MCP SDKs' test vectors as JSON data (a script, not a test).

    python tests/interop/extract.py MIRROR_ROOT     # rewrite tests/interop/vectors/*.json
    python tests/interop/extract.py MIRROR_ROOT --check   # fail if the files would change

MIRROR_ROOT holds one bare git snapshot per SDK, at `modelcontextprotocol+<sdk>/repo` (what the
project's `fetch` tool writes); the commit read is that snapshot's HEAD, recorded per group.
A new SDK release is a re-run: fetch again, run this, read the diff, run the suite.

How each language is read (the data comes from the test source, never typed in by hand):

- Python: the literal argument lists of `@pytest.mark.parametrize`, and literal arguments of
  calls in a test body, evaluated by `ast` with the module's own helper functions and constants.
- TypeScript: a named `const` table, or a `test.each` template table, evaluated by `node` (the
  table's TypeScript type annotation is stripped; `X_MCP_HEADER_KEY` is defined as the spec's
  `"x-mcp-header"`).
- Go: `[]struct{...}{...}` test tables, read by a small parser for Go composite literals
  (`map[string]any{}`, `[]any{}`, struct literals, `int64(...)`, `strings.Repeat`, ...).
- Rust: `json!(...)` and string-literal arguments of the asserting calls in `#[test]` functions.
- Single-assertion tests whose input is an inline object (the result-dispatch tests of the
  TypeScript SDK): the object text is located in the file by a quoted anchor and evaluated
  by `node`; `check` fails when the anchor is no longer in the file.

What the SDK expects is recorded in the SDK's terms (`valid`, `encoded`, `outcome`, ...); what
conduit-mcp is expected to do differently is pinned separately, in `expected_differences.json`.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "vectors"
X_MCP_HEADER = "x-mcp-header"
MAX_SAFE_INTEGER = 2**53 - 1


class Unsupported(Exception):
    """A table entry this extractor cannot turn into JSON (recorded as skipped, with why)."""


# -- reading a snapshot ----------------------------------------------------------------------


class Repo:
    def __init__(self, root: Path, sdk: str) -> None:
        self.sdk = sdk
        self.git = root / f"modelcontextprotocol+{sdk}" / "repo"
        self.commit = self._run("rev-parse", "HEAD").strip()

    def _run(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.git), *args], check=True, capture_output=True, text=True
        ).stdout

    def show(self, path: str) -> str:
        return self._run("show", f"{self.commit}:{path}")


def group(
    repo: Repo, area: str, path: str, test: str, vectors: list[dict[str, Any]]
) -> dict[str, Any]:
    if not vectors:
        raise SystemExit(f"{repo.sdk} {path} {test}: no vectors found (did the test move?)")
    return {
        "area": area,
        "source": {
            "repo": f"github.com/modelcontextprotocol/{repo.sdk}",
            "commit": repo.commit,
            "file": path,
            "test": test,
        },
        "vectors": vectors,
    }


# -- Python: ast ----------------------------------------------------------------------------


class _Param:
    def __init__(self, *values: Any, id: str | None = None, marks: Any = None) -> None:
        self.values = values
        self.id = id


class _Pytest:
    @staticmethod
    def param(*values: Any, id: str | None = None, marks: Any = None) -> _Param:
        return _Param(*values, id=id)


def _py_namespace(tree: ast.Module, names: tuple[str, ...]) -> dict[str, Any]:
    # Only the module's named helpers and constants run: no imports, nothing else.
    namespace: dict[str, Any] = {"pytest": _Pytest, "Any": Any}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            node.returns = None
            for arg in node.args.args + node.args.kwonlyargs:
                arg.annotation = None
            if node.args.kwarg is not None:
                node.args.kwarg.annotation = None
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not (isinstance(target, ast.Name) and target.id in names):
                continue
            if isinstance(node, ast.AnnAssign):
                node = ast.copy_location(ast.Assign(targets=[target], value=node.value), node)
        else:
            continue
        code = compile(ast.fix_missing_locations(ast.Module([node], [])), "<sdk>", "exec")
        exec(code, namespace)
    return namespace


def _py_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    raise SystemExit(f"test {name} not found")


def py_params(
    source: str, test: str, helpers: tuple[str, ...] = ()
) -> list[tuple[str, tuple[Any, ...]]]:
    """The rows of a test's `@pytest.mark.parametrize`, as (id, values)."""
    tree = ast.parse(source)
    namespace = _py_namespace(tree, helpers)
    func = _py_function(tree, test)
    for decorator in func.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func) == "pytest.mark.parametrize"
        ):
            names = ast.literal_eval(decorator.args[0])
            single = isinstance(names, str) and "," not in names
            rows = eval(compile(ast.Expression(decorator.args[1]), "<sdk>", "eval"), namespace)
            ids = None
            for keyword in decorator.keywords:
                if keyword.arg == "ids":
                    ids = ast.literal_eval(keyword.value)
            out = []
            for index, row in enumerate(rows):
                if isinstance(row, _Param):
                    values, row_id = row.values, row.id
                else:
                    values, row_id = ((row,) if single else tuple(row)), None
                if row_id is None:
                    row_id = ids[index] if ids else str(index)
                out.append((row_id, values))
            return out
    raise SystemExit(f"{test}: no parametrize")


def py_call_args(source: str, test: str, callee: str) -> list[Any]:
    """The literal first arguments of every call to `callee` in a test body."""
    func = _py_function(ast.parse(source), test)
    found = []
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == callee and node.args:
            found.append(eval(compile(ast.Expression(node.args[0]), "<sdk>", "eval"), {}))
    return found


def py_assert_eq(
    source: str, test: str, callee: str, helpers: tuple[str, ...] = ()
) -> list[tuple[list[Any], Any]]:
    """(arguments, expected) of each `assert callee(...) == expected` in a test body; the
    body's plain assignments run first (they build the inputs from literals and helpers)."""
    tree = ast.parse(source)
    namespace = _py_namespace(tree, helpers)
    func = _py_function(tree, test)
    found = []
    calls: dict[str, ast.Call] = {}
    for node in func.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == callee:
                calls[ast.unparse(target)] = node.value  # `got = callee(...)`, asserted below
                continue
            value = eval(compile(ast.Expression(node.value), "<sdk>", "eval"), namespace)
            namespace[ast.unparse(target)] = value
        elif isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            left = node.test.left
            if isinstance(left, ast.Name) and left.id in calls:
                left = calls[left.id]
            if isinstance(left, ast.Call) and ast.unparse(left.func) == callee:
                args = [
                    eval(compile(ast.Expression(a), "<sdk>", "eval"), namespace) for a in left.args
                ]
                right = node.test.comparators[0]
                found.append(
                    (args, eval(compile(ast.Expression(right), "<sdk>", "eval"), namespace))
                )
    if not found:
        raise SystemExit(f"{test}: no assert {callee}(...) == ...")
    return found


def py_assigned(source: str, test: str, name: str) -> Any:
    """The literal value assigned to `name` (or passed as keyword `name=`) in a test body."""
    func = _py_function(ast.parse(source), test)
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == name:
            return ast.literal_eval(node.value)
        if isinstance(node, ast.keyword) and node.arg == name:
            return ast.literal_eval(node.value)
    raise SystemExit(f"{test}: {name} not found")


# -- TypeScript: node -------------------------------------------------------------------------

_TS_PRELUDE = f"const X_MCP_HEADER_KEY = {json.dumps(X_MCP_HEADER)};\n"


def node_eval(expression: str, prelude: str = "") -> Any:
    script = _TS_PRELUDE + prelude + f"process.stdout.write(JSON.stringify({expression}));"
    out = subprocess.run(["node", "-e", script], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _balanced(text: str, start: int) -> str:
    """The bracketed expression that opens at text[start] (strings and comments skipped)."""
    pairs = {"[": "]", "{": "}", "(": ")"}
    stack: list[str] = []
    i = start
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            i += 1
            while text[i] != c:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.index("\n", i)
            continue
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if stack.pop() != c:
                raise Unsupported(f"unbalanced at {i}")
            if not stack:
                return text[start : i + 1]
        i += 1
    raise Unsupported("unterminated")


def ts_const(source: str, name: str) -> Any:
    match = re.search(rf"const {name}\b[^=]*=\s*", source)
    if not match:
        raise SystemExit(f"const {name} not found")
    return node_eval(_balanced(source, match.end()))


def ts_each(source: str, anchor: str) -> list[dict[str, Any]]:
    """The rows of the first `test.each` template table after `anchor`, as dicts."""
    start = source.index("test.each`", source.index(anchor)) + len("test.each`")
    table = source[start : source.index("`", start)]
    lines = [line.strip() for line in table.strip().splitlines()]
    header = [cell.strip() for cell in lines[0].split("|")]
    rows = []
    for line in lines[1:]:
        cells = re.findall(r"\$\{(.*?)\}\s*(?:\||$)", line)
        rows.append(dict(zip(header, node_eval("[" + ", ".join(cells) + "]"), strict=True)))
    return rows


def ts_call_args(source: str, anchor: str, callee: str) -> list[Any]:
    """The arguments of the first call to `callee` after `anchor` in the file, evaluated."""
    at = source.index(callee + "(", source.index(anchor)) + len(callee)
    return list(node_eval("[" + _balanced(source, at)[1:-1] + "]"))


# -- Go: composite literals ------------------------------------------------------------------

_GO_CONSTS = {"maxSafeInteger": MAX_SAFE_INTEGER, "minSafeInteger": -MAX_SAFE_INTEGER}
_GO_TOKEN = re.compile(
    r'\s*(?://[^\n]*\n\s*)*(?P<tok>"(?:[^"\\]|\\.)*"|`[^`]*`|-?\d+(?:\.\d+)?|[A-Za-z_][\w.]*|'
    r"\[\]|[{}()\[\],:&+*])"
)


class GoParser:
    def __init__(self, text: str, variables: dict[str, Any] | None = None) -> None:
        self.tokens = [m.group("tok") for m in _GO_TOKEN.finditer(text)]
        self.i = 0
        self.variables = variables or {}

    def peek(self, ahead: int = 0) -> str:
        return self.tokens[self.i + ahead]

    def take(self, expected: str | None = None) -> str:
        tok = self.tokens[self.i]
        if expected is not None and tok != expected:
            raise Unsupported(f"expected {expected!r}, got {tok!r}")
        self.i += 1
        return tok

    def value(self) -> Any:
        left = self._atom()
        while self.i < len(self.tokens) and self.peek() == "+":
            self.take()
            right = self._atom()
            if isinstance(left, (int, float)) and isinstance(right, (int, float)):
                left = left + right
            else:
                raise Unsupported("non-numeric +")
        return left

    def _atom(self) -> Any:
        tok = self.take()
        if tok.startswith('"'):
            return json.loads(tok)
        if tok.startswith("`"):
            return tok[1:-1]
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if re.fullmatch(r"-?\d+\.\d+", tok):
            return float(tok)
        if tok in ("true", "false"):
            return tok == "true"
        if tok == "nil":
            return None
        if tok in _GO_CONSTS:
            return _GO_CONSTS[tok]
        if tok == "&":
            return self._atom()
        if tok == "map":
            self.take("[")
            self.take("string")
            self.take("]")
            schema_values = False
            while self.peek() != "{":  # the value type: any, string, *jsonschema.Schema
                schema_values |= self.take() == "jsonschema.Schema"
            mapping = self._composite(keyed=True)
            if schema_values:
                return {k: _from_jsonschema(v) for k, v in mapping.items()}
            return mapping
        if tok == "[]":
            while self.peek() != "{":  # the element type
                self.take()
            return self._composite(keyed=False)
        if tok in ("int64", "int", "float64") and self.peek() == "(":
            self.take("(")
            inner = self.value()
            self.take(")")
            return float(inner) if tok == "float64" else int(inner)
        if tok == "strings.Repeat":
            self.take("(")
            text = self.value()
            self.take(",")
            count = self.value()
            self.take(")")
            return text * count
        if tok == "json.RawMessage":
            self.take("(")
            text = self.value()
            self.take(")")
            return json.loads(text)
        if tok == "mustMarshal":
            self.take("(")
            inner = self.value()
            self.take(")")
            return inner
        if tok == "{":
            self.i -= 1
            return self._composite(keyed=None)
        if re.fullmatch(r"[A-Za-z_][\w.]*", tok) and self.peek() == "{":
            struct = self._composite(keyed=None)  # a struct literal (fields by Go name)
            return _from_jsonschema(struct) if tok == "jsonschema.Schema" else struct
        if tok in self.variables:
            return self.variables[tok]
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            return {"$go_identifier": tok}  # a constant this extractor does not resolve
        raise Unsupported(f"Go construct {tok!r}")

    def _composite(self, keyed: bool | None) -> Any:
        self.take("{")
        items: list[Any] = []
        pairs: dict[str, Any] = {}
        while self.peek() != "}":
            if keyed is not False and self.peek(1) == ":":
                key = self.take()
                self.take(":")
                pairs[json.loads(key) if key.startswith('"') else key] = self.value()
                keyed = True
            else:
                items.append(self.value())
                keyed = False
            if self.peek() == ",":
                self.take()
        self.take("}")
        return pairs if keyed else items


def _from_jsonschema(struct: dict[str, Any]) -> dict[str, Any]:
    # `jsonschema.Schema{Type, Properties, Extra}` marshals to the JSON object it names.
    out: dict[str, Any] = {}
    for field, value in struct.items():
        if field == "Type":
            out["type"] = value
        elif field == "Properties":
            out["properties"] = value  # a map[string]*jsonschema.Schema, converted when read
        elif field == "Items":
            out["items"] = value  # read as a *jsonschema.Schema literal, already converted
        elif field == "Default":
            out["default"] = value
        elif field == "Extra":
            out.update(value)
        else:
            raise Unsupported(f"jsonschema.Schema field {field}")
    return out


def go_table(
    source: str, test: str, table: str | None = None, variables: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The entries of a `[]struct{...}{...}` table in `func test`, as dicts by field name."""
    body = source[source.index(f"func {test}(") :]
    if table is not None:
        body = body[body.index(table) :]
    struct_at = body.index("[]struct {")
    fields_text = _balanced(body, body.index("{", struct_at))
    fields = [line.split()[0] for line in fields_text[1:-1].strip().splitlines() if line.strip()]
    entries_text = _balanced(body, struct_at + len("[]struct ") + len(fields_text))
    parser = GoParser(entries_text, variables)
    parser.take("{")
    rows: list[dict[str, Any]] = []
    while parser.peek() != "}":
        start = parser.i
        try:
            entry = parser._composite(keyed=None)
        except Unsupported as exc:
            # Skip to the end of this entry and record why.
            parser.i = start
            depth = 0
            while True:
                tok = parser.take()
                depth += tok == "{"
                depth -= tok == "}"
                if depth == 0:
                    break
            rows.append(
                {
                    "__skipped__": str(exc),
                    "__text__": " ".join(parser.tokens[start : parser.i])[:120],
                }
            )
        else:
            rows.append(entry if isinstance(entry, dict) else dict(zip(fields, entry, strict=True)))
        if parser.peek() == ",":
            parser.take()
    return rows


def go_input_schema(tool: Any) -> Any:
    if not isinstance(tool, dict) or "InputSchema" not in tool:
        raise Unsupported("no InputSchema")
    return tool["InputSchema"]


# -- Rust --------------------------------------------------------------------------------------


def rust_tests(source: str, module: str) -> Iterator[tuple[str, str]]:
    """(test name, body) for each `#[test] fn` inside `mod module`."""
    at = source.index(f"mod {module} {{")
    block = _balanced(source, source.index("{", at))
    for match in re.finditer(r"#\[test\]\s*fn (\w+)\(\)\s*", block):
        yield match.group(1), _balanced(block, match.end())


def rust_json(body: str) -> Any:
    text = _balanced(body, body.index("json!(") + len("json!"))[1:-1]
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def rust_str(literal: str) -> str:
    return json.loads(literal)


# -- the groups ---------------------------------------------------------------------------------


def python_sdk(repo: Repo) -> list[dict[str, Any]]:
    inbound = "tests/shared/test_inbound.py"
    src = repo.show(inbound)
    helpers = ("_schema", "_ANNOTATED", "_APPLICATOR_CASES", "REGION_SCHEMA")
    groups = []

    test = "test_decode_header_value_round_trips_encode"
    groups.append(
        group(
            repo,
            "round_trip",
            inbound,
            test,
            [{"id": row_id, "value": values[0]} for row_id, values in py_params(src, test)],
        )
    )
    test = "test_decode_header_value_returns_none_for_malformed_sentinel"
    groups.append(
        group(
            repo,
            "decode",
            inbound,
            test,
            [
                {"id": row_id, "header": values[0], "decoded": None}
                for row_id, values in py_params(src, test)
            ],
        )
    )
    test = "test_validate_mcp_param_headers_accepts_agreeing_header_and_argument"
    groups.append(
        group(
            repo,
            "decode",
            inbound,
            test,
            [
                {"id": row_id, "header": values[1], "decoded": values[0]}
                for row_id, values in py_params(src, test, helpers)
            ],
        )
    )
    test = "test_validate_mcp_param_headers_rejects_malformed_sentinel"
    groups.append(
        group(
            repo,
            "decode",
            inbound,
            test,
            [
                {"id": row_id, "header": values[0], "decoded": None}
                for row_id, values in py_params(src, test, helpers)
            ],
        )
    )
    for test, valid in (
        ("test_find_invalid_x_mcp_header_accepts_valid_or_absent_annotations", True),
        ("test_find_invalid_x_mcp_header_rejects_malformed_annotations", False),
    ):
        vectors = []
        for row_id, values in py_params(src, test, helpers):
            vector: dict[str, Any] = {"id": row_id, "input_schema": values[0], "valid": valid}
            try:
                _json_safe(values[0])
            except Unsupported as exc:
                vector = {"id": row_id, "skipped": str(exc)}
            vectors.append(vector)
        groups.append(group(repo, "x_mcp_header", inbound, test, vectors))
    test = (
        "test_find_invalid_x_mcp_header_rejects_annotations_under_every_non_properties_applicator"
    )
    namespace = _py_namespace(ast.parse(src), helpers)
    # The test builds each schema from a literal table; the rows are that table's keys.
    cases = namespace["_APPLICATOR_CASES"]
    groups.append(
        group(
            repo,
            "x_mcp_header",
            inbound,
            test,
            [
                {
                    "id": keyword,
                    "input_schema": namespace["_schema"](ok={"type": "string"})
                    | {keyword: cases[keyword]},
                    "valid": False,
                }
                for keyword in sorted(cases)
            ],
        )
    )
    test = "test_mcp_param_headers_base64_wraps_header_unsafe_strings"
    groups.append(
        group(
            repo,
            "encode",
            inbound,
            test,
            [
                {"id": row_id, "value": values[0], "encoded": values[1]}
                for row_id, values in py_params(src, test)
            ],
        )
    )

    test = "test_x_mcp_header_map_keys_top_level_and_nested_properties_by_path"
    groups.append(
        group(
            repo,
            "header_map",
            inbound,
            test,
            [
                {
                    "id": str(i),
                    "input_schema": args[0],
                    "map": {h: list(path) for path, h in want.items()},
                }
                for i, (args, want) in enumerate(
                    py_assert_eq(src, test, "x_mcp_header_map", helpers)
                )
            ],
        )
    )
    test = "test_x_mcp_header_map_empty_for_schemas_without_annotations"
    groups.append(
        group(
            repo,
            "header_map",
            inbound,
            test,
            [
                {"id": row_id, "input_schema": values[0], "map": {}}
                for row_id, values in py_params(src, test, helpers)
            ],
        )
    )
    for test in (
        "test_mcp_param_headers_renders_primitive_types_per_spec",
        "test_mcp_param_headers_omits_absent_or_null_arguments",
        "test_mcp_param_headers_reads_nested_argument_path",
        "test_mcp_param_headers_omits_when_nested_path_is_broken",
    ):
        groups.append(
            group(
                repo,
                "param_headers",
                inbound,
                test,
                [
                    {
                        "id": str(i),
                        "header_map": {h: list(path) for path, h in args[0].items()},
                        "arguments": args[1],
                        "headers": want,
                    }
                    for i, (args, want) in enumerate(
                        py_assert_eq(src, test, "mcp_param_headers", helpers)
                    )
                ],
            )
        )

    names = "tests/shared/test_tool_name_validation.py"
    src = repo.show(names)
    vectors = []
    test = "test_validate_tool_name_accepts_valid_names"
    vectors = [{"id": i, "name": v[0], "valid": True} for i, v in py_params(src, test)]
    groups.append(group(repo, "tool_name", names, test, vectors))
    test = "test_validate_tool_name_rejects_invalid_characters"
    groups.append(
        group(
            repo,
            "tool_name",
            names,
            test,
            [{"id": i, "name": v[0], "valid": False} for i, v in py_params(src, test)],
        )
    )
    for test, valid in (
        ("test_validate_tool_name_rejects_empty_name", False),
        ("test_validate_tool_name_rejects_name_exceeding_max_length", False),
        ("test_validate_tool_name_rejects_multiple_invalid_chars", False),
        ("test_validate_tool_name_rejects_unicode_characters", False),
        ("test_validate_tool_name_warns_on_leading_dash", True),
        ("test_validate_tool_name_warns_on_trailing_dash", True),
    ):
        args = py_call_args(src, test, "validate_tool_name")
        groups.append(
            group(
                repo,
                "tool_name",
                names,
                test,
                [{"id": str(i), "name": name, "valid": valid} for i, name in enumerate(args)],
            )
        )

    output = "tests/client/test_output_schema_validation.py"
    src = repo.show(output)
    for test in (
        "test_tool_structured_output_client_side_validation_basemodel",
        "test_tool_structured_output_client_side_validation_primitive",
        "test_tool_structured_output_client_side_validation_dict_typed",
        "test_tool_structured_output_client_side_validation_missing_required",
    ):
        groups.append(
            group(
                repo,
                "structured",
                output,
                test,
                [
                    {
                        "id": "0",
                        "output_schema": py_assigned(src, test, "output_schema"),
                        "structured_content": py_assigned(src, test, "structured_content"),
                        "valid": False,
                    }
                ],
            )
        )

    types_file = "tests/test_types.py"
    src = repo.show(types_file)
    test = "test_input_required_result_requires_at_least_one_of_input_requests_or_request_state"
    body = ast.unparse(_py_function(ast.parse(src), test))
    if "InputRequiredResult(input_requests={})" not in body:
        raise SystemExit(f"{test}: the empty inputRequests case is gone")
    groups.append(
        group(
            repo,
            "call_result",
            types_file,
            test,
            [
                {
                    "id": "empty",
                    "version": "2026-07-28",
                    "result": {"resultType": "input_required"},
                    "outcome": "refused",
                },
                {
                    "id": "input-requests-empty",
                    "version": "2026-07-28",
                    "result": {"resultType": "input_required", "inputRequests": {}},
                    "outcome": "refused",
                },
                {
                    "id": "request-state-only",
                    "version": "2026-07-28",
                    "result": {"resultType": "input_required", "requestState": "s"},
                    "outcome": "input_required",
                },
            ],
        )
    )
    return groups


def _json_safe(value: Any) -> None:
    # Integers beyond what a JSON reader takes back (4,300 digits) cannot ride in a data file.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > 10**4000:
            raise Unsupported("an integer too long for a JSON data file (10**5000)")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def typescript_sdk(repo: Repo) -> list[dict[str, Any]]:
    groups = []
    headers = "packages/core-internal/test/shared/mcpParamHeaders.test.ts"
    src = repo.show(headers)
    groups.append(
        group(
            repo,
            "encode",
            headers,
            "encodeMcpParamValue / decodeMcpParamValue — spec encoding-examples table",
            [
                {"id": label, "value": value, "encoded": encoded, "round_trip": True}
                for label, value, encoded in ts_const(src, "CASES")
            ],
        )
    )
    groups.append(
        group(
            repo,
            "decode",
            headers,
            "decode rejects invalid Base64 padding inside the sentinel",
            [
                {
                    "id": "padding",
                    "header": ts_call_args(
                        src, "decode rejects invalid Base64 padding", "decodeMcpParamValue"
                    )[0],
                    "decoded": None,
                },
            ],
        )
    )
    groups.append(
        group(
            repo,
            "decode",
            headers,
            "decode rejects non-alphabet characters inside the sentinel",
            [
                {
                    "id": "alphabet",
                    "header": ts_call_args(
                        src, "decode rejects non-alphabet characters", "decodeMcpParamValue"
                    )[0],
                    "decoded": None,
                },
            ],
        )
    )
    groups.append(
        group(
            repo,
            "x_mcp_header",
            headers,
            "scanXMcpHeaderDeclarations — REACHABILITY_CASES",
            [
                {"id": label, "input_schema": schema, "valid": False}
                for label, schema in ts_const(src, "REACHABILITY_CASES")
            ],
        )
    )
    for anchor, valid in (
        ("a valid declaration is collected", True),
        ("declarations at any nesting depth are collected", True),
        ("a schema with no declarations scans valid", True),
        ("empty x-mcp-header value is rejected", False),
        ("non-token x-mcp-header value (space) is rejected", False),
        ("object-typed property is rejected", False),
        ("array-typed property is rejected", False),
        ("null-typed property is rejected", False),
        ("case-insensitively duplicated header name is rejected", False),
    ):
        opener = "valid(" if valid else "invalid("
        at = src.index(anchor)
        schema = node_eval(_balanced(src, src.index(opener, at) + len(opener)))
        groups.append(
            group(
                repo,
                "x_mcp_header",
                headers,
                anchor,
                [{"id": "0", "input_schema": schema, "valid": valid}],
            )
        )
    anchor = "declarations at any nesting depth are collected"
    at = src.index(anchor)
    groups.append(
        group(
            repo,
            "header_map",
            headers,
            anchor,
            [
                {
                    "id": "0",
                    "input_schema": node_eval(
                        _balanced(src, src.index("valid(", at) + len("valid("))
                    ),
                    "map": {"Inner": ["outer", "inner"]},
                }
            ],
        )
    )

    at = src.index("describe('buildMcpParamHeaders'")
    decls_at = src.index("const DECLS = ", at) + len("const DECLS = ")
    prelude = "const DECLS = " + _balanced(src, decls_at) + ";\n"
    vectors = []
    for anchor in (
        "present primitive values become headers; null and absent are omitted",
        "a non-primitive value is silently omitted",
    ):
        start = src.index("buildMcpParamHeaders(", src.index(anchor)) + len("buildMcpParamHeaders")
        decls, arguments = node_eval("[" + _balanced(src, start)[1:-1] + "]", prelude)
        end = start + len(_balanced(src, start))
        want_at = src.index("toEqual(", end) + len("toEqual")
        vectors.append(
            {
                "id": anchor,
                "header_map": {d["headerName"]: d["path"] for d in decls},
                "arguments": arguments,
                "headers": node_eval(_balanced(src, want_at)),
            }
        )
    groups.append(group(repo, "param_headers", headers, "buildMcpParamHeaders", vectors))

    names = "packages/core-internal/test/shared/toolNameValidation.test.ts"
    src = repo.show(names)
    for anchor, valid_key in (
        ("describe('valid tool names'", None),
        ("describe('invalid tool names'", None),
        ("describe('warnings for potentially problematic patterns'", "shouldBeValid"),
    ):
        rows = ts_each(src, anchor)
        groups.append(
            group(
                repo,
                "tool_name",
                names,
                anchor[len("describe('") : -1],
                [
                    {
                        "id": row["description"],
                        "name": row["toolName"],
                        "valid": (
                            row[valid_key] if valid_key else anchor.startswith("describe('valid")
                        ),
                    }
                    for row in rows
                ],
            )
        )

    parity = "packages/core-internal/test/shared/contentDefaultParity.test.ts"
    src = repo.show(parity)
    vectors = []
    for anchor, outcome, vid in (
        ("a structured-only result resolves with content: []", "complete", "structured-only"),
        ("an entirely empty result resolves with content: []", "complete", "empty"),
        ("a task-shaped body without content still fails loudly", "refused", "task"),
    ):
        body = node_eval(
            _balanced(src, src.index("respondWith(", src.index(anchor)) + len("respondWith"))
        )
        vectors.append({"id": vid, "version": "2025-11-25", "result": body, "outcome": outcome})
    at = src.index("an input_required-shaped body without content still fails loudly")
    for vid in ("input-requests", "request-state"):
        at = src.index("respondWith(", at) + len("respondWith")
        body = node_eval(_balanced(src, at))
        vectors.append({"id": vid, "version": "2025-11-25", "result": body, "outcome": "refused"})
    groups.append(
        group(repo, "call_result", parity, "CallToolResult content default (v1 parity)", vectors)
    )

    first = "packages/core-internal/test/shared/rawResultTypeFirst.test.ts"
    src = repo.show(first)
    input_required = ts_const(src, "INPUT_REQUIRED_BODY")
    modern = []
    for anchor, outcome, vid in (
        ("an unrecognized resultType kind is invalid", "refused", "unknown-kind"),
        ("ABSENT resultType is a spec violation on the modern leg", "refused", "absent"),
        ("a non-string resultType can never surface as a success", "refused", "non-string"),
        ("resultType 'complete' is consumed", "complete", "complete"),
    ):
        at = src.index("wireWithRawResult(", src.index(anchor)) + len("wireWithRawResult")
        args = node_eval("[" + _balanced(src, at)[1:-1] + "]")
        modern.append({"id": vid, "version": args[1], "result": args[0], "outcome": outcome})
    modern.append(
        {
            "id": "input-required",
            "version": "2026-07-28",
            "result": input_required,
            "outcome": "input_required",
        }
    )
    groups.append(
        group(repo, "call_result", first, "raw-first resultType discrimination — 2026 era", modern)
    )
    legacy = [
        {
            "id": "foreign-input-required",
            "version": "2025-11-25",
            "result": input_required,
            "outcome": "refused",
        }
    ]
    for anchor, vid in (
        ("strip-on-lift is VALUE-BLIND", "input-required-with-content"),
        ("a foreign non-string resultType is stripped", "non-string-with-content"),
        ("absent resultType is untouched 2025-era behavior", "absent"),
    ):
        at = src.index("wireWithRawResult(", src.index(anchor)) + len("wireWithRawResult")
        args = node_eval("[" + _balanced(src, at)[1:-1] + "]")
        legacy.append(
            {"id": vid, "version": "2025-11-25", "result": args[0], "outcome": "complete"}
        )
    groups.append(
        group(repo, "call_result", first, "raw-first resultType handling — 2025 era", legacy)
    )
    return groups


def go_sdk(repo: Repo) -> list[dict[str, Any]]:
    groups = []
    headers = "mcp/streamable_headers_test.go"
    src = repo.show(headers)
    vectors: list[dict[str, Any]] = []
    for row in go_table(src, "TestValidateToolParamHeaders"):
        vid = row.get("name", "unnamed-" + str(len(vectors)))
        if "__skipped__" in row:
            vectors.append({"id": vid, "skipped": row["__skipped__"]})
            continue
        try:
            schema = go_input_schema(row["tool"])
        except Unsupported as exc:
            vectors.append({"id": vid, "skipped": str(exc)})
            continue
        vectors.append({"id": vid, "input_schema": schema, "valid": not row.get("wantErr", False)})
    groups.append(group(repo, "x_mcp_header", headers, "TestValidateToolParamHeaders", vectors))

    vectors = []
    for row in go_table(src, "TestEncodeHeaderValue"):
        if "__skipped__" in row:
            vectors.append({"id": row["__text__"], "skipped": row["__skipped__"]})
        elif row["name"] == "raw float64 rejected":
            # Go decodes every JSON number to float64; the raw type has no JSON spelling of
            # its own (JSON 42 is the "integer" row above), so this row tests Go, not MCP.
            vectors.append(
                {"id": row["name"], "skipped": "a Go type distinction JSON cannot carry"}
            )
        else:
            vectors.append(
                {
                    "id": row["name"],
                    "value": row["value"],
                    "encoded": row["want"] if row["wantOK"] else None,
                }
            )
    groups.append(group(repo, "encode", headers, "TestEncodeHeaderValue", vectors))

    groups.append(
        group(
            repo,
            "decode",
            headers,
            "TestDecodeHeaderValue",
            [
                {
                    "id": row["name"],
                    "header": row["input"],
                    "decoded": row["want"] if row["wantOK"] else None,
                }
                for row in go_table(src, "TestDecodeHeaderValue")
            ],
        )
    )
    at = src.index("func TestEncodeDecodeRoundTrip(")
    values = GoParser(_balanced(src, src.index("{", src.index("values := []string", at)))).value()
    groups.append(
        group(
            repo,
            "round_trip",
            headers,
            "TestEncodeDecodeRoundTrip",
            [{"id": str(i), "value": v} for i, v in enumerate(values)],
        )
    )

    vectors = []
    for row in go_table(src, "TestExtractToolParamHeaders"):
        if "__skipped__" in row:
            vectors.append({"id": row["__text__"], "skipped": row["__skipped__"]})
            continue
        schema = go_input_schema(row["tool"])
        vectors.append(
            {
                "id": row["name"],
                "input_schema": schema,
                "map_by_dotted_path": row.get("want") or {},
            }
        )
    groups.append(group(repo, "header_map", headers, "TestExtractToolParamHeaders", vectors))

    vectors = []
    for row in go_table(src, "TestSetStandardHeaders"):
        params = (row.get("msg") or {}).get("Params")
        if not isinstance(params, dict) or not row["wantNameHeader"]:
            continue  # rows about the method header or the version gate, not Mcp-Name
        name = params.get("Name", params.get("URI"))
        vectors.append({"id": row["name"], "name": name, "header": row["wantNameHeader"]})
    groups.append(group(repo, "mcp_name", headers, "TestSetStandardHeaders", vectors))

    at = src.index(
        "toolSchema := map[string]any", src.index("func TestSetStandardHeadersWithParamHeaders(")
    )
    parser = GoParser(src[at + len("toolSchema := ") : at + 2000])
    shared = {"tool": {"Name": "execute_sql", "InputSchema": parser.value()}}
    if 'tool := &Tool{Name: "execute_sql", InputSchema: toolSchema}' not in src:
        raise SystemExit("TestSetStandardHeadersWithParamHeaders: the shared tool changed")
    vectors = []
    for row in go_table(src, "TestSetStandardHeadersWithParamHeaders", variables=shared):
        if "__skipped__" in row:
            vectors.append({"id": row["__text__"], "skipped": row["__skipped__"]})
            continue
        vid = row["name"]
        tool = row.get("tool")
        params = row.get("params")
        if not isinstance(tool, dict) or not isinstance(params, dict):
            vectors.append({"id": vid, "skipped": "tool or params is not a literal"})
            continue
        want = row.get("wantHeaders") or {}
        vectors.append(
            {
                "id": vid,
                "input_schema": go_input_schema(tool),
                "arguments": params.get("Arguments"),
                "headers": {k: v for k, v in want.items() if k.startswith("Mcp-Param-")},
            }
        )
    groups.append(
        group(repo, "param_headers", headers, "TestSetStandardHeadersWithParamHeaders", vectors)
    )

    tools = "mcp/tool_test.go"
    src = repo.show(tools)
    vectors = []
    for row in go_table(src, "TestApplySchemaOutput"):
        if "__skipped__" in row:
            vectors.append({"id": row["__text__"], "skipped": row["__skipped__"]})
            continue
        data = json.loads(row["data"]) if row["data"] else None
        if not row["data"] or (data is None and row.get("want") != "null"):
            # The row checks what the server's applySchema turns the value into (an empty
            # body or null becomes {} with defaults), not whether the value is valid.
            vectors.append({"id": row["name"], "skipped": "a server-side coercion, not a verdict"})
            continue
        vectors.append(
            {
                "id": row["name"],
                "version": "2026-07-28",  # SEP-2106: non-object roots
                "output_schema": row["schema"],
                "structured_content": data,
                "valid": "wantErr" not in row,
            }
        )
    groups.append(group(repo, "structured", tools, "TestApplySchemaOutput", vectors))
    for table, valid in (("validTests", True), ("invalidTests", False)):
        groups.append(
            group(
                repo,
                "tool_name",
                tools,
                f"TestValidateToolName/{table}",
                [
                    {"id": row["label"], "name": row["toolName"], "valid": valid}
                    for row in go_table(src, "TestValidateToolName", table)
                ],
            )
        )
    server = "mcp/server_test.go"
    src = repo.show(server)
    groups.append(
        group(
            repo,
            "tool_name",
            server,
            "TestAddToolNameValidation",
            [
                {"id": row["label"], "name": row["name"], "valid": row["wantLogContaining"] == ""}
                for row in go_table(src, "TestAddToolNameValidation")
            ],
        )
    )
    return groups


def rust_sdk(repo: Repo) -> list[dict[str, Any]]:
    groups = []
    path = "crates/rmcp/src/transport/common/mcp_headers.rs"
    src = repo.show(path)
    prefix, suffix = "=?base64?", "?="
    vectors: list[dict[str, Any]] = []
    for name, body in rust_tests(src, "encode_header_value"):
        eq = re.search(
            r'assert_eq!\(encode_header_value\(("(?:[^"\\]|\\.)*")\), ("(?:[^"\\]|\\.)*")\)', body
        )
        wrapped = re.search(r'assert_wrapped\(("(?:[^"\\]|\\.)*")\)', body)
        if eq:
            vectors.append(
                {"id": name, "value": rust_str(eq.group(1)), "encoded": rust_str(eq.group(2))}
            )
        elif wrapped:
            vectors.append({"id": name, "value": rust_str(wrapped.group(1)), "wrapped": True})
        elif "BASE64_HEADER_PREFIX}x{BASE64_HEADER_SUFFIX}" in body:
            vectors.append({"id": name, "value": f"{prefix}x{suffix}", "wrapped": True})
        else:
            raise SystemExit(f"rust {name}: unknown shape")
    groups.append(group(repo, "encode", path, "mod encode_header_value", vectors))
    vectors = []
    for name, body in rust_tests(src, "decode_header_value"):
        if name == "round_trips_with_encode":
            items = re.search(r"for value in \[(.*?)\]", body, re.S).group(1)  # type: ignore[union-attr]
            for i, lit in enumerate(re.findall(r'"(?:[^"\\]|\\.)*"', items)):
                vectors.append(
                    {"id": f"{name}/{i}", "value": rust_str(lit), "round_trip_only": True}
                )
        elif name == "rejects_invalid_base64":
            inner = re.search(r"BASE64_HEADER_PREFIX\}(.*?)\{BASE64_HEADER_SUFFIX", body).group(1)  # type: ignore[union-attr]
            vectors.append({"id": name, "header": prefix + inner + suffix, "decoded": None})
    groups.append(group(repo, "decode", path, "mod decode_header_value", vectors))
    vectors = []
    for name, body in rust_tests(src, "validate_param_header_annotations"):
        properties = rust_json(body)
        vectors.append(
            {
                "id": name,
                "input_schema": {"type": "object", "properties": properties},
                "valid": "is_ok()" in body,
            }
        )
    groups.append(
        group(repo, "x_mcp_header", path, "mod validate_param_header_annotations", vectors)
    )
    return groups


SDKS: dict[str, Callable[[Repo], list[dict[str, Any]]]] = {
    "python-sdk": python_sdk,
    "typescript-sdk": typescript_sdk,
    "go-sdk": go_sdk,
    "rust-sdk": rust_sdk,
}


def main(argv: list[str]) -> int:
    root = Path(argv[1])
    check = "--check" in argv
    changed = []
    for sdk, extract in SDKS.items():
        repo = Repo(root, sdk)
        data = {"sdk": sdk, "commit": repo.commit, "groups": extract(repo)}
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        target = VECTORS / f"{sdk}.json"
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        changed.append(target.name)
        if not check:
            VECTORS.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    print(("would change: " if check else "wrote: ") + (", ".join(changed) or "nothing"))
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
