"""The public names of conduit_mcp.client, .llm, .pins and .guard, pinned.

A name added to or dropped from an `__all__` fails here until this file (and CHANGELOG.md) say
so. Each face's `__all__` is grouped by concept, each group under a comment in its
`__init__.py`; the groups are pinned too, in order.
"""

from __future__ import annotations

import importlib
import io
import tokenize
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: conduit_mcp.client's `__all__`: group (the first words of its comment) -> names, in order.
CLIENT_GROUPS: dict[str, list[str]] = {
    "Tools and results": [
        "Tool",
        "Hints",
        "DEFAULT_HINTS",
        "check_server_id",
        "check_tool_name",
        "ToolResult",
        "InputRequired",
        "parse_call_result",
        "ExtensionResult",
        "EXTENSION_RESULT_TYPES",
    ],
    "Intake": [
        "intake",
        "intake_json",
        "unwrap_response",
        "Intake",
        "Rejection",
        "Transport",
        "TRANSPORTS",
        "IntakeWarning",
        "WARNING_CODES",
        "find_invisible",
    ],
    "Model text": ["clean_tool_text", "clean_result_text", "CleanedText"],
    "Look-alike names": ["lookalike_key", "find_lookalikes", "lookalike_relation", "skeleton"],
    "Fingerprints": ["fingerprint", "FINGERPRINT_PREFIX"],
    "Validation": [
        "validate_structured",
        "validate_arguments",
        "arguments_validator",
        "OutputValidation",
        "OutputIssue",
    ],
    "Conformance": ["conformance_violations", "is_conformant", "ConformanceKind"],
    "Headers": ["headers"],
    "JSON": ["parse_json", "canonical_json"],
    "Errors": ["Error", "REASONS", "PathItem", "render_path"],
    "Versions": [
        "KNOWN_VERSIONS",
        "LATEST",
        "version_at_least",
        "SINCE",
        "Rule",
        "version_supports",
    ],
}

#: The namespaces among them (public modules), and each one's `__all__` in order.
NAMESPACES: dict[str, list[str]] = {
    "conduit_mcp.client.headers": [
        "header_map",
        "mcp_param_headers",
        "mcp_name_header",
        "encode_header_value",
        "decode_header_value",
        "find_invalid_x_mcp_header",
        "param_headers_apply",
    ],
}

#: The most names `conduit_mcp.client` exports (issue 28: a newcomer reads the list whole).
MAX_CLIENT_NAMES = 50

#: conduit_mcp.llm's `__all__`, the same way.
LLM_GROUPS: dict[str, list[str]] = {
    "Shaping": [
        "shape_for_llm",
        "shaped_text",
        "Provenance",
        "PROVENANCE_FLAGS",
        "IncludeStructured",
        "DEFAULT_ACCEPTED_MIME_TYPES",
        "DEFAULT_MAX_CHARS",
        "MIN_MAX_CHARS",
        "is_strict_base64",
    ],
    "Adapters": [
        "to_openai_tool",
        "to_openai_tool_message",
        "from_openai_strict_arguments",
        "to_anthropic_tool",
        "to_anthropic_tool_result",
        "to_gemini_function",
        "to_gemini_function_response",
        "AdaptedTool",
        "AdaptedResult",
        "SchemaNote",
        "SchemaPath",
        "ToolNameMap",
        "ToolRef",
        "NameRule",
        "provider_accepts_name",
        "OPENAI_NAME_RULE",
        "ANTHROPIC_NAME_RULE",
        "GEMINI_NAME_RULE",
    ],
}

#: conduit_mcp.pins's `__all__`, the same way.
PINS_GROUPS: dict[str, list[str]] = {
    "The store": [
        "PinStore",
        "AsyncPinStore",
        "PinWatcher",
        "Pin",
        "PinCheck",
        "PinOutcome",
        "PinStatus",
        "Pending",
        "AuditEntry",
        "StoredPolicy",
        "CallRecord",
        "arguments_digest",
        "redacted_location",
    ],
    "Instructions": ["InstructionsCheck", "PendingInstructions"],
    "Decisions and the review console": [
        "RejectedDefinition",
        "Revocation",
        "ServerSummary",
        "Account",
    ],
    "Changes": [
        "ToolDiff",
        "diff_tools",
        "ChangeOp",
        "FieldChange",
        "DEFAULT_COSMETIC",
        "SchemaChange",
        "schema_change",
        "schema_changes",
    ],
    "Content hashes": ["content_hash", "CONTENT_HASH_PREFIX"],
}

WRAP_GROUPS = {
    "Rewriting": ["wrap_config", "unwrap_config", "Outcome"],
    "Reading": ["ConfigSyntaxError"],
    "Checking": ["doctor_config", "ServerCheck"],
}

GUARD_ALL = [
    "EVENT_KINDS",
    "GUARD_REASONS",
    "INVALID_RESULT_CODE",
    "MAX_EVENTS",
    "REFUSED_CALL_CODE",
    "RESULT_META_KEY",
    "Guard",
    "GuardEvent",
    "Policy",
    "guard_agent_framework_tool",
    "guard_openai_agents_server",
]


def _groups_in_source(path: Path) -> dict[str, list[str]]:
    """The `__all__` of `path` as comment -> names, read with tokenize (comments are tokens)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline))
    start = next(
        i for i, tok in enumerate(tokens) if tok.type == tokenize.NAME and tok.string == "__all__"
    )
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for tok in tokens[start:]:
        if tok.type == tokenize.OP and tok.string == "]":
            break
        if tok.type == tokenize.COMMENT and not tok.string.startswith("# noqa"):
            title = tok.string.lstrip("# ").split(":")[0]
            current = groups.setdefault(title, [])
        elif tok.type == tokenize.STRING:
            assert current is not None, f"{tok.string} is listed before any group comment"
            current.append(tok.string.strip("\"'"))
    return groups


#: conduit_mcp.policy's `__all__` (issue 32).
POLICY_GROUPS: dict[str, list[str]] = {
    "Policies": ["Policy", "PolicyRule", "PolicyError", "MAX_POLICY_BYTES"],
    "Decisions": ["Caller", "PolicyView", "Decision", "DECISION_REASONS"],
    "A fleet": ["PolicyFollower", "from_stored"],
}

FACES = {
    "client": CLIENT_GROUPS,
    "llm": LLM_GROUPS,
    "pins": PINS_GROUPS,
    "policy": POLICY_GROUPS,
    "wrap": WRAP_GROUPS,
}


@pytest.mark.parametrize("face", sorted(FACES))
def test_each_face_all_is_pinned_and_grouped_by_concept(face: str) -> None:
    """conduit-defined: the exact names, in the groups and order of the face's `__init__.py`."""
    module = importlib.import_module(f"conduit_mcp.{face}")
    expected = [name for names in FACES[face].values() for name in names]
    assert list(module.__all__) == expected
    assert len(set(expected)) == len(expected)
    source = ROOT / "src" / "conduit_mcp" / face / "__init__.py"
    assert _groups_in_source(source) == FACES[face]


def test_no_name_is_exported_by_two_faces() -> None:
    """conduit-defined: one home per public name (a namespace's names included)."""
    names = [n for groups in FACES.values() for group in groups.values() for n in group]
    names += [n for members in NAMESPACES.values() for n in members]
    assert len(names) == len(set(names))


def test_the_core_exports_at_most_fifty_names() -> None:
    """conduit-defined (issue 28): the core's `__all__` stays short enough to read whole."""
    assert len(importlib.import_module("conduit_mcp.client").__all__) <= MAX_CLIENT_NAMES


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_each_namespace_is_pinned_and_exported_by_its_face(namespace: str) -> None:
    """conduit-defined: a namespace's `__all__` exactly, every public attribute in it, and the
    namespace itself one name of its face (`from conduit_mcp.client import headers`)."""
    module = importlib.import_module(namespace)
    assert list(module.__all__) == NAMESPACES[namespace]
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert public == set(module.__all__)
    face, _, name = namespace.rpartition(".")
    assert getattr(importlib.import_module(face), name) is module
    assert name in importlib.import_module(face).__all__


def test_guard_all_is_pinned() -> None:
    """conduit-defined: the guard's public names (needs the mcp extra)."""
    pytest.importorskip("mcp")
    guard = importlib.import_module("conduit_mcp.guard")
    assert sorted(guard.__all__) == sorted(GUARD_ALL)


@pytest.mark.parametrize(
    "module",
    [
        "conduit_mcp.client",
        "conduit_mcp.llm",
        "conduit_mcp.pins",
        "conduit_mcp.policy",
        "conduit_mcp.guard",
        "conduit_mcp.wrap",
    ],
)
def test_every_public_attribute_is_in_all_and_every_name_resolves(module: str) -> None:
    """conduit-defined: nothing public by accident (submodules aside, but for the namespaces),
    nothing listed missing."""
    if module == "conduit_mcp.guard":
        pytest.importorskip("mcp")
    mod = importlib.import_module(module)
    public = {
        name
        for name, value in vars(mod).items()
        if not name.startswith("_")
        and (not isinstance(value, types.ModuleType) or value.__name__ in NAMESPACES)
        and name != "annotations"
    }
    assert public == set(mod.__all__)


def _changelog_section(title: str) -> str:
    text = (ROOT / "CHANGELOG.md").read_text("utf-8")
    start = text.index(f"### {title}")
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_changelog_lists_every_reason_with_its_kind() -> None:
    """conduit-defined: the table in CHANGELOG.md is REASONS, row for row."""
    from conduit_mcp.client import REASONS

    section = _changelog_section("Error reasons and their kinds")
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1].split()[0]
    assert rows == dict(REASONS)


@pytest.mark.parametrize(
    ("title", "codes"),
    [
        ("Intake warning codes", "WARNING_CODES"),
        ("Provenance flags", "PROVENANCE_FLAGS"),
    ],
)
def test_changelog_lists_every_code(title: str, codes: str) -> None:
    """conduit-defined: each code set of the client is listed in CHANGELOG.md, exactly."""
    client = importlib.import_module("conduit_mcp.client")
    llm = importlib.import_module("conduit_mcp.llm")
    section = _changelog_section(title).split("\n", 1)[1]
    listed = {part.strip("`") for part in section.replace("\n", " ").split("`") if part.strip()}
    listed = {code for code in listed if code.replace("_", "").isalnum()}
    assert listed == set(getattr(client, codes, None) or getattr(llm, codes))


def test_changelog_lists_every_public_name() -> None:
    """conduit-defined: every name of the faces' and the namespaces' `__all__`s appears in the
    Public API section."""
    section = (ROOT / "CHANGELOG.md").read_text("utf-8").split("## Public API", 1)[1]
    names = [n for groups in FACES.values() for group in groups.values() for n in group]
    names += [n for members in NAMESPACES.values() for n in members]
    names += GUARD_ALL
    assert [name for name in names if f"`{name}`" not in section] == []


def test_changelog_lists_the_guards_event_kinds_and_reasons() -> None:
    """conduit-defined: EVENT_KINDS and GUARD_REASONS, exactly, in their two paragraphs."""
    pytest.importorskip("mcp")
    guard = importlib.import_module("conduit_mcp.guard")
    section = _changelog_section("Guard event kinds")
    kinds_text, reasons_text = section.split("Event kinds:", 1)[1].split("Guard reasons", 1)
    reasons_text = reasons_text.split("pass through):", 1)[1]

    def codes(text: str) -> set[str]:
        return {part for part in text.replace("\n", " ").split("`")[1::2]}

    assert codes(kinds_text) == set(guard.EVENT_KINDS)
    assert codes(reasons_text) == set(guard.GUARD_REASONS)
