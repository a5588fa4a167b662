"""The guard's fast path for `tools/call` results: it only ever says "accepted" where the SDK's
own models accept (mcp 2.3.0, mcp_types 2.3.0), on the corpus results and hypothesis-made ones.

The models are the oracle: `sdk_result_refusal` with the fast path switched off is exactly the
SDK's check (`mcp_types.methods.validate_server_result`, then `CallToolResult |
InputRequiredResult` as `ClientSession.send_request` applies them).
"""

from __future__ import annotations

from typing import Any

import pytest
from conduit_mcp_wire import VERSIONS
from hypothesis import given
from hypothesis import strategies as st
from mcp_types import methods

from conduit_mcp.guard import _sdkcheck
from conduit_mcp.guard._sdkfast import surely_accepted
from tests.corpus import results
from tests.property.profiles import bounded
from tests.spec_facts import definitions, requires_result_type

#: The versions where a plain result has `content` (each version's schema; the fast path's
#: shape), and those the SDK has models for (mcp_types.methods.SERVER_RESULTS): every
#: registered version is checked, the models being the oracle where they exist.
PLAIN_VERSIONS = tuple(
    v for v in VERSIONS if "content" in definitions(v)["CallToolResult"].get("required", [])
)
SDK_VERSIONS = tuple(v for v in PLAIN_VERSIONS if ("tools/call", v) in methods.SERVER_RESULTS)


def _models_verdict(result: Any, version: str) -> Any:
    """What the SDK's models say (the fast path off)."""
    saved = _sdkcheck.surely_accepted
    _sdkcheck.surely_accepted = lambda result, version: False  # type: ignore[assignment]
    try:
        return _sdkcheck.sdk_result_refusal(result, version)
    finally:
        _sdkcheck.surely_accepted = saved  # type: ignore[assignment]


def _unwrapped(data: Any) -> Any:
    return data["result"] if isinstance(data, dict) and "result" in data else data


def test_on_every_corpus_result_the_fast_path_agrees_with_the_models() -> None:
    """mcp_types models as oracle: every result the fast path accepts, the models accept; and the
    fast path takes the plain ones (a fast path that never fires would prove nothing)."""
    taken = 0
    for capture in results():
        result = _unwrapped(capture.data)
        for version in VERSIONS:
            if surely_accepted(result, version):
                taken += 1
                assert _models_verdict(result, version) is None, (capture.id, version)
    assert taken >= 100


_TEXT = st.one_of(
    *[st.text(max_size=20)] * 4, st.sampled_from(["\ud800", "a\udfff", "é", "\u200b"])
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(
        lambda t, k, v: {"type": "text", "text": t, k: v},
        _TEXT,
        st.sampled_from(["annotations", "_meta", "extra", "type"]),
        _JSON,
    ),
    st.builds(lambda v: {"type": "text", "text": v}, _JSON),
    st.builds(lambda d: {"type": "image", "data": d, "mimeType": "image/png"}, st.text()),
    st.builds(lambda t: {"text": t}, _TEXT),
    _JSON,
)
_ABSENT = object()


def _result(
    content: Any, is_error: Any, structured: Any, result_type: Any, meta: Any, extra: Any
) -> Any:
    out: dict[str, Any] = {}
    for key, value in (
        ("content", content),
        ("isError", is_error),
        ("structuredContent", structured),
        ("resultType", result_type),
        ("_meta", meta),
        ("extra", extra),
    ):
        if value is not _ABSENT:
            out[key] = value
    return out


def _maybe(strategy: Any, weight: int = 2) -> Any:
    return st.one_of(*([st.just(_ABSENT)] * weight), strategy)


_WIDE = (
    st.builds(
        _result,
        st.one_of(st.lists(_BLOCK, max_size=4), st.lists(_BLOCK, max_size=3).map(tuple), _JSON),
        _maybe(st.booleans() | st.none() | st.sampled_from([0, 1, "true"])),
        _maybe(st.dictionaries(st.text(max_size=5), _JSON, max_size=3) | _JSON),
        _maybe(st.sampled_from(["complete", "complete", "input_required", "other", None, 1]), 1),
        _maybe(st.dictionaries(st.text(max_size=5), _JSON, max_size=2), 4),
        _maybe(_JSON, 4),
    )
    | _JSON
)
# Near the plain shape (so the fast path fires often), with the perturbations it must see.
_PLAIN_BLOCK = st.builds(lambda t: {"type": "text", "text": t}, _TEXT)
_NEAR_PLAIN = st.builds(
    _result,
    st.lists(st.one_of(_PLAIN_BLOCK, _PLAIN_BLOCK, _PLAIN_BLOCK, _BLOCK), max_size=4),
    _maybe(st.booleans() | st.booleans() | st.none(), 1),
    _maybe(st.dictionaries(st.text(max_size=5), _JSON, max_size=3), 1),
    _maybe(st.just("complete") | st.sampled_from(["input_required", "x"]), 3),
    st.just(_ABSENT),
    _maybe(_JSON, 8),
)
_RESULTS = _NEAR_PLAIN | _NEAR_PLAIN | _WIDE


@bounded(200)
@given(result=_RESULTS, version=st.sampled_from(VERSIONS))
def test_on_made_results_the_fast_path_never_accepts_what_the_models_refuse(
    result: Any, version: str
) -> None:
    """mcp_types models as oracle, on hypothesis-made results around the plain shape."""
    if surely_accepted(result, version):
        assert _models_verdict(result, version) is None


@pytest.mark.parametrize("version", SDK_VERSIONS)
def test_a_plain_result_takes_the_fast_path(version: str) -> None:
    """conduit-defined: the common result (text blocks, maybe isError and an object) is taken
    without the models, and the models agree."""
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": "21.5 °C"}],
        "isError": False,
        "structuredContent": {"temperature": 21.5},
    }
    if requires_result_type(version):
        assert not surely_accepted(result, version)  # resultType is required there
        result["resultType"] = "complete"
    assert surely_accepted(result, version)
    assert _models_verdict(result, version) is None
    assert _sdkcheck.sdk_result_refusal(result, version) is None


@st.composite
def _plain_results(draw: Any) -> tuple[Any, str]:
    """A version and a result of the plain shape for it (lone surrogates among the texts)."""
    version = draw(st.sampled_from(PLAIN_VERSIONS))
    result: dict[str, Any] = {"content": draw(st.lists(_PLAIN_BLOCK, max_size=4))}
    if draw(st.booleans()):
        result["isError"] = draw(st.booleans())
    if draw(st.booleans()):
        result["structuredContent"] = draw(st.dictionaries(st.text(max_size=5), _JSON))
    if requires_result_type(version):
        result["resultType"] = "complete"
    return result, version


@bounded(200)
@given(case=_plain_results())
def test_on_made_plain_results_the_fast_path_fires_and_the_models_agree(
    case: tuple[Any, str],
) -> None:
    """mcp_types models as oracle: every plain result whose texts are valid Unicode is taken by
    the fast path, and the models accept it."""
    result, version = case
    valid = all(_encodable(block["text"]) for block in result["content"])
    assert surely_accepted(result, version) is valid
    if valid:
        assert _models_verdict(result, version) is None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
