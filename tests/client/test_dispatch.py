"""Tests for `parse_call_result` and `InputRequired` (`_dispatch.py`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp.client import Error, InputRequired, ToolResult, parse_call_result
from tests.corpus import CORPUS, results

SPEC_EXAMPLES = Path(__file__).resolve().parents[2] / "schema" / "2026-07-28" / "examples"
NEW = "2026-07-28"
OLD_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
RESULT_TYPE_VERSIONS = ["2026-07-28", "draft"]
TEXT = {"type": "text", "text": "ok"}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# -- resultType dispatch -----------------------------------------------------------------------


@pytest.mark.parametrize("version", RESULT_TYPE_VERSIONS)
def test_result_type_complete_gives_a_tool_result(version: str) -> None:
    """Spec-mandated (2026-07-28 basic "ResultType"): `complete` means the request completed and
    the result holds the final content."""
    result = parse_call_result(
        {"resultType": "complete", "content": [TEXT], "isError": True}, protocol_version=version
    )
    assert isinstance(result, ToolResult)
    assert result.is_error is True
    assert result.content == [TEXT]


@pytest.mark.parametrize("version", RESULT_TYPE_VERSIONS)
def test_absent_result_type_is_invalid_at_2026_07_28(version: str) -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.resultType`: "Servers implementing this
    protocol version MUST include this field"; the absent-means-complete bridge is for a server
    "implementing an earlier protocol version", which a negotiated 2026-07-28 rules out)."""
    with pytest.raises(Error) as info:
        parse_call_result({"content": [TEXT]}, protocol_version=version)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_result_type", ("resultType",))
    assert err.details["got"] == "missing"


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_absent_result_type_is_complete_before_2026_07_28(version: str) -> None:
    """Spec-mandated (2026-07-28 schema `Result.resultType`: a result from a server on an
    earlier revision has no `resultType`, and the client MUST treat it as `"complete"`)."""
    result = parse_call_result({"content": [TEXT]}, protocol_version=version)
    assert isinstance(result, ToolResult)
    assert result.content == [TEXT]


ALL_VERSIONS = OLD_VERSIONS + RESULT_TYPE_VERSIONS
TASK = {"taskId": "t-1", "status": "working"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(
    ("body", "key"),
    [
        pytest.param({"task": TASK}, "task", id="task"),
        pytest.param(
            {"inputRequests": {"r1": {"method": "elicitation/create"}}},
            "inputRequests",
            id="input-requests",
        ),
        pytest.param({"requestState": "opaque"}, "requestState", id="request-state"),
        pytest.param({"task": TASK, "requestState": "s"}, "task", id="task-first"),
        pytest.param({"inputRequests": 5, "isError": False}, "inputRequests", id="any-value"),
    ],
)
def test_another_result_types_members_without_content_are_not_a_complete_result(
    version: str, body: dict[str, Any], key: str
) -> None:
    """Spec-mandated (every revision's schema `CallToolResult` requires `content`; `task` is
    2025-11-25 `CreateTaskResult`, `inputRequests` / `requestState` are 2026-07-28
    `InputRequiredResult`): such a body is not a complete result, on any version, even when it
    says `resultType: "complete"`. The TypeScript SDK refuses the same bodies."""
    raw = dict(body)
    if version in RESULT_TYPE_VERSIONS:
        raw["resultType"] = "complete"
    before = copy.deepcopy(raw)
    with pytest.raises(Error) as info:
        parse_call_result(raw, protocol_version=version)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_result_type", (key,))
    assert raw == before


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_foreign_members_beside_content_are_kept_as_extra(version: str) -> None:
    """Spec-mandated (schema `Result`: additional properties allowed): with `content` present the
    body is a `CallToolResult`; the other members are unknown keys, kept in `extra`."""
    raw: dict[str, Any] = {"content": [TEXT], "requestState": "s", "task": TASK}
    if version in RESULT_TYPE_VERSIONS:
        raw["resultType"] = "complete"
    result = parse_call_result(raw, protocol_version=version)
    assert isinstance(result, ToolResult)
    assert result.extra == {"requestState": "s", "task": TASK}


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_a_body_without_content_or_foreign_members_still_reads_as_empty(version: str) -> None:
    """conduit-defined (liberal, as `ToolResult.from_wire` and the TypeScript SDK's v1 parity):
    a missing `content` with nothing else foreign reads as `[]`."""
    result = parse_call_result({"structuredContent": {"ok": True}}, protocol_version=version)
    assert isinstance(result, ToolResult)
    assert result.content == []
    assert result.structured == {"ok": True}


@pytest.mark.parametrize("version", RESULT_TYPE_VERSIONS)
def test_result_type_input_required_gives_input_required(version: str) -> None:
    """Spec-mandated (2026-07-28 basic "ResultType"): `input_required` means more input is needed
    and the result is an `InputRequiredResult`."""
    result = parse_call_result(
        {"resultType": "input_required", "requestState": "opaque"}, protocol_version=version
    )
    assert isinstance(result, InputRequired)
    assert result.request_state == "opaque"
    assert result.input_requests == {}
    assert result.result_type == "input_required"


@pytest.mark.parametrize(
    "value",
    ["incomplete", "Complete", "COMPLETE", " complete", "complete ", "input-required", "", "task"],
)
def test_unrecognised_result_type_string_is_invalid(value: str) -> None:
    """Spec-mandated (2026-07-28 basic "ResultType"): a `resultType` of any value unrecognized by
    the client MUST be considered invalid (values are compared exactly)."""
    with pytest.raises(Error) as info:
        parse_call_result({"resultType": value, "content": []}, protocol_version=NEW)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_result_type", ("resultType",))
    assert err.details["value"] == value
    assert err.details["got"] == "string"


@pytest.mark.parametrize(
    ("value", "json_type"),
    [(None, "null"), (1, "integer"), (True, "boolean"), ([], "array"), ({}, "object")],
    ids=repr,
)
def test_result_type_that_is_not_a_string_is_invalid(value: object, json_type: str) -> None:
    """Spec-mandated (2026-07-28 schema `Result.resultType`: type string; basic "ResultType":
    unrecognised values MUST be invalid)."""
    with pytest.raises(Error) as info:
        parse_call_result({"resultType": value, "content": []}, protocol_version=NEW)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_result_type", ("resultType",))
    assert err.details["got"] == json_type
    assert "value" not in err.details


def test_input_required_without_requests_or_state_is_not_a_success() -> None:
    """Spec-mandated (2026-07-28 basic/patterns/mrtr "Server Requirements": servers MUST include
    at least one of `inputRequests` or `requestState`). The python-sdk reads this very object as
    a successful empty result; a client must not."""
    with pytest.raises(Error) as info:
        parse_call_result({"content": [], "resultType": "input_required"}, protocol_version=NEW)
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "protocol",
        "invalid_tool_result",
        (),
    )


@pytest.mark.parametrize("version", OLD_VERSIONS)
@pytest.mark.parametrize("value", ["input_required", "weird", None, 7])
def test_result_type_is_ignored_before_2026_07_28(version: str, value: object) -> None:
    """Spec-mandated (2025-11-25 schema `CallToolResult` has no `resultType`: an unknown key is
    not part of that protocol, so it cannot change how the result is read)."""
    raw = {"resultType": value, "content": [TEXT]}
    result = parse_call_result(raw, protocol_version=version)
    assert isinstance(result, ToolResult)
    assert result.content == [TEXT]


@pytest.mark.parametrize("raw", [None, [], "result", 3, True], ids=repr)
@pytest.mark.parametrize("version", ["2025-11-25", NEW])
def test_a_result_that_is_not_an_object_is_invalid(raw: object, version: str) -> None:
    """Spec-mandated (2026-07-28 basic "Result Responses": the `result` is a JSON object)."""
    with pytest.raises(Error) as info:
        parse_call_result(raw, protocol_version=version)
    assert (info.value.kind, info.value.reason, info.value.path) == (
        "protocol",
        "invalid_tool_result",
        (),
    )


def test_a_complete_result_with_a_bad_shape_is_rejected_as_tool_result_does() -> None:
    """Spec-mandated (2026-07-28 schema `CallToolResult.content`: an array)."""
    with pytest.raises(Error) as info:
        parse_call_result({"resultType": "complete", "content": {}}, protocol_version=NEW)
    assert (info.value.reason, info.value.path) == ("invalid_tool_result", ("content",))


def test_unknown_protocol_version_is_refused() -> None:
    """conduit-defined: the negotiated version must be a revision this library knows."""
    with pytest.raises(Error) as info:
        parse_call_result({"content": []}, protocol_version="2027-01-01")
    assert info.value.reason == "unknown_protocol_version"


def test_protocol_version_that_is_not_a_string_is_a_caller_bug() -> None:
    """conduit-defined: TypeError for a caller bug."""
    with pytest.raises(TypeError):
        parse_call_result({"content": []}, protocol_version=20260728)  # type: ignore[arg-type]


# -- InputRequired shape -----------------------------------------------------------------------


def _input_required(**fields: object) -> dict[str, object]:
    return {"resultType": "input_required", **fields}


ELICIT = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {}}}


@pytest.mark.parametrize(
    ("raw", "path", "expected"),
    [
        pytest.param(
            _input_required(inputRequests=[ELICIT]), ("inputRequests",), "an object", id="array"
        ),
        pytest.param(
            _input_required(inputRequests=None), ("inputRequests",), "an object", id="null"
        ),
        pytest.param(
            _input_required(inputRequests={"k": "elicit"}),
            ("inputRequests", "k"),
            "an object",
            id="value-string",
        ),
        pytest.param(
            _input_required(inputRequests={"k": {"params": {}}}),
            ("inputRequests", "k", "method"),
            "a string",
            id="method-missing",
        ),
        pytest.param(
            _input_required(inputRequests={"k": {"method": 5}}),
            ("inputRequests", "k", "method"),
            "a string",
            id="method-number",
        ),
        pytest.param(
            _input_required(requestState=None), ("requestState",), "a string", id="state-null"
        ),
        pytest.param(
            _input_required(requestState={"a": 1}),
            ("requestState",),
            "a string",
            id="state-object",
        ),
    ],
)
def test_input_required_with_a_wrong_shape_is_invalid_with_a_path(
    raw: dict[str, object], path: tuple[object, ...], expected: str
) -> None:
    """Spec-mandated (2026-07-28 schema `InputRequiredResult`: `inputRequests` is an object of
    `InputRequest` objects, each with a string `method`; `requestState` is a string)."""
    with pytest.raises(Error) as info:
        parse_call_result(raw, protocol_version=NEW)
    err = info.value
    assert (err.kind, err.reason, err.path) == ("protocol", "invalid_tool_result", path)
    assert err.details["expected"] == expected


@pytest.mark.parametrize("version", RESULT_TYPE_VERSIONS)
def test_input_required_with_empty_requests_and_no_state_is_invalid(version: str) -> None:
    """conduit-defined, after the Python SDK (`InputRequiredResult(input_requests={})` is a
    validation error): an empty `inputRequests` with no `requestState` gives the client nothing
    to answer and nothing to echo (2026-07-28 basic/patterns/mrtr), so it is not a result."""
    with pytest.raises(Error) as info:
        parse_call_result(_input_required(inputRequests={}), protocol_version=version)
    err = info.value
    assert (err.kind, err.reason, err.path) == (
        "protocol",
        "invalid_tool_result",
        ("inputRequests",),
    )


def test_input_required_with_empty_requests_and_a_state_is_accepted() -> None:
    """Spec-mandated (2026-07-28 schema `InputRequiredResult`: at least one of the two MUST be
    present; `requestState` alone is enough)."""
    result = parse_call_result(
        _input_required(inputRequests={}, requestState="s"), protocol_version=NEW
    )
    assert isinstance(result, InputRequired)
    assert result.input_requests == {}
    assert result.request_state == "s"


def test_input_required_keeps_request_state_exactly_and_meta() -> None:
    """Spec-mandated (2026-07-28 basic/patterns/mrtr "Client Requirements": the client MUST echo
    back the exact `requestState`, MUST NOT modify it)."""
    state = "  eyJ4Ijo\u00e91fQ==\n  "
    raw = _input_required(
        inputRequests={"github_login": ELICIT}, requestState=state, _meta={"k": [1]}, extra=True
    )
    result = parse_call_result(raw, protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert result.request_state == state
    assert result.input_requests == {"github_login": ELICIT}
    assert result.meta == {"k": [1]}
    assert result.raw is raw


def test_input_required_without_request_state_reads_as_none() -> None:
    """Spec-mandated (2026-07-28 basic/patterns/mrtr "Client Requirements": with no
    `requestState` the client MUST NOT include one in the retry, so absence must be visible)."""
    result = parse_call_result(_input_required(inputRequests={"a": ELICIT}), protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert result.request_state is None


def test_input_required_meta_that_is_not_an_object_reads_as_empty() -> None:
    """conduit-defined: as `ToolResult.meta`, a non-object `_meta` reads as `{}`."""
    result = parse_call_result(_input_required(requestState="s", _meta=[1]), protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert result.meta == {}


def test_input_required_is_immutable() -> None:
    """conduit-defined: results are frozen."""
    result = InputRequired.from_wire(_input_required(requestState="s"))
    with pytest.raises(AttributeError):
        result.request_state = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del result.raw


def test_input_required_from_wire_refuses_another_result_type() -> None:
    """conduit-defined: `InputRequired.from_wire` reads only `input_required` results."""
    with pytest.raises(Error) as info:
        InputRequired.from_wire({"resultType": "complete", "requestState": "s"})
    assert (info.value.reason, info.value.path) == ("invalid_result_type", ("resultType",))
    with pytest.raises(Error) as info:
        InputRequired.from_wire({"requestState": "s"})
    assert info.value.details["got"] == "missing"


def test_input_required_copy_makes_it_independent_of_the_input() -> None:
    """conduit-defined: `copy=True` deep-copies, so later changes to the input do not show."""
    raw = _input_required(inputRequests={"a": copy.deepcopy(ELICIT)}, requestState="s")
    result = parse_call_result(raw, protocol_version=NEW, copy=True)
    raw["inputRequests"]["a"]["method"] = "changed"  # type: ignore[index]
    assert isinstance(result, InputRequired)
    assert result.input_requests["a"]["method"] == "elicitation/create"


def test_input_required_repr_does_not_show_the_opaque_state() -> None:
    """conduit-defined: `requestState` is opaque and may be sensitive; repr shows only presence."""
    result = InputRequired.from_wire(_input_required(requestState="secret-token-123"))
    assert "secret-token-123" not in repr(result)
    assert "has_request_state=True" in repr(result)


def test_input_required_equality_compares_the_wire_object() -> None:
    """conduit-defined: two results are equal when their wire objects are."""
    one = InputRequired.from_wire(_input_required(requestState="s"))
    two = InputRequired.from_wire(_input_required(requestState="s"))
    other = InputRequired.from_wire(_input_required(requestState="t"))
    assert one == two
    assert one != other


# -- spec examples and the corpus ---------------------------------------------------------------


def test_spec_example_input_required_with_elicitation_sampling_and_state() -> None:
    """Spec-mandated (2026-07-28 examples/InputRequiredResult
    input-required-result-with-elicitation-and-sampling-and-request-state.json)."""
    name = "input-required-result-with-elicitation-and-sampling-and-request-state.json"
    raw = _load(SPEC_EXAMPLES / "InputRequiredResult" / name)
    result = parse_call_result(raw, protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert sorted(result.input_requests) == ["capital_of_france", "github_login"]
    assert result.input_requests["github_login"]["method"] == "elicitation/create"
    assert result.input_requests["capital_of_france"]["method"] == "sampling/createMessage"
    assert result.request_state == "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0"


def test_spec_example_input_required_with_request_state_only() -> None:
    """Spec-mandated (2026-07-28 examples/InputRequiredResult
    input-required-result-with-request-state-only.json)."""
    name = "input-required-result-with-request-state-only.json"
    raw = _load(SPEC_EXAMPLES / "InputRequiredResult" / name)
    result = parse_call_result(raw, protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert result.input_requests == {}
    assert result.request_state == "eyJwcm9ncmVzcyI6IjUwJSIsInN0YXRlIjoicHJvY2Vzc2luZyJ9"


@pytest.mark.parametrize("path", sorted((SPEC_EXAMPLES / "CallToolResult").glob("*.json")))
def test_spec_example_call_tool_results_are_complete(path: Path) -> None:
    """Spec-mandated (2026-07-28 examples/CallToolResult: every example has
    `resultType: "complete"`)."""
    result = parse_call_result(_load(path), protocol_version=NEW)
    assert isinstance(result, ToolResult)


def test_spec_docs_input_required_example_from_tools_page() -> None:
    """Spec-mandated (2026-07-28 server/tools, the `input_required` example of a `tools/call`)."""
    raw = _load(CORPUS / "results" / "spec-docs" / "2026-07-28--tools-mdx-L182.json")
    result = parse_call_result(raw, protocol_version=NEW)
    assert isinstance(result, InputRequired)
    assert list(result.input_requests) == ["github_login"]
    assert result.request_state == "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0..."


def _expected_kind(raw: dict[str, Any], version: str) -> type:
    # The rule from basic "ResultType", applied to the file's own resultType.
    if version in RESULT_TYPE_VERSIONS:
        if raw.get("resultType") == "input_required":
            return InputRequired
        if "resultType" not in raw:
            return Error
    elif "content" not in raw and any(k in raw for k in ("task", "inputRequests", "requestState")):
        # Another result type's body (the TypeScript SDK's 2025-era rule): never a success.
        return Error
    return ToolResult


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("capture", results(), ids=lambda c: c.id)
def test_every_corpus_result_parses_and_is_not_mutated(capture: Any, version: str) -> None:
    """Spec-mandated (2026-07-28 schema `Result.resultType` and basic "ResultType"; earlier
    revisions have no `resultType`): every captured `tools/call` result parses to the kind its
    `resultType` names (at 2026-07-28 a capture without one, from a server on an earlier
    revision, is refused), and the input object is left exactly as it was."""
    raw = capture.data
    before = copy.deepcopy(raw)
    expected = _expected_kind(raw, version)
    if expected is Error:
        with pytest.raises(Error) as info:
            parse_call_result(raw, protocol_version=version)
        assert info.value.reason == "invalid_result_type"
    else:
        result = parse_call_result(raw, protocol_version=version)
        assert type(result) is expected
        assert result.raw is raw
    assert raw == before


def test_corpus_holds_both_result_kinds() -> None:
    """conduit-defined: the corpus test above covers every branch of the dispatch."""
    kinds = {_expected_kind(c.data, NEW) for c in results()}
    assert kinds == {ToolResult, InputRequired, Error}


def test_no_corpus_result_uses_an_unrecognised_result_type() -> None:
    """Spec-mandated (2026-07-28 basic "ResultType"): real servers send only `complete`,
    `input_required`, or no `resultType`; none of them is refused."""
    seen = {c.data.get("resultType", "<absent>") for c in results()}
    assert seen <= {"complete", "input_required", "<absent>"}
