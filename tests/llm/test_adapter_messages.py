"""Tool results as provider messages, checked with the providers' own request types
(openai `ChatCompletionToolMessageParam` / `ResponseInputItemParam`, anthropic
`ToolResultBlockParam` inside a `MessageParam`, google-genai `types.FunctionResponse`)."""

from __future__ import annotations

import json

import pytest

from conduit_mcp.client import Error, ToolResult
from conduit_mcp.llm import (
    shape_for_llm,
    to_anthropic_tool_result,
    to_gemini_function_response,
    to_openai_tool_message,
)
from tests.corpus import captures
from tests.llm.sdk_oracles import GROUP, sdk

# One worker imports the provider SDKs (tests/llm/sdk_oracles.py).
pytestmark = pytest.mark.xdist_group(GROUP)

PNG = "iVBORw0KGgo="  # the PNG signature, base64 (strict: padded, RFC 4648 alphabet)
WAV = "UklGRiQAAABXQVZFZm10IA=="  # "RIFF", a length, "WAVEfmt ": a WAV header's first 16 bytes
RAW = {
    "content": [
        {"type": "text", "text": "chart\u200b of sales"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    ]
}


def shaped(raw: dict[str, object]) -> ToolResult:
    return shape_for_llm(
        ToolResult.from_wire(raw),
        server_id="charts",
        accepted_mime_types={"image/png", "audio/wav"},
    )


def validate(result: ToolResult) -> None:
    chat = to_openai_tool_message(result, call_id="call_1")
    sdk().chat_message.validate_python(chat.message)
    responses = to_openai_tool_message(result, call_id="call_1", api="responses")
    sdk().responses_item.validate_python(responses.message)
    anthropic = to_anthropic_tool_result(result, tool_use_id="toolu_1")
    sdk().tool_result.validate_python(anthropic.message)
    sdk().message.validate_python({"role": "user", "content": [anthropic.message]})
    gemini = to_gemini_function_response(result, name="chart")
    sdk().genai_types.FunctionResponse.model_validate_json(json.dumps(gemini.message))
    for adapted in (chat, responses, anthropic, gemini):
        assert adapted.provenance is result.provenance


def test_result_with_an_image_goes_to_each_provider() -> None:
    """Spec-mandated (provider message formats: OpenAI tool messages take text parts only,
    Responses function_call_output takes input_image; Anthropic tool_result takes base64 image
    sources; Gemini FunctionResponse takes inline parts)."""
    result = shaped(RAW)
    validate(result)
    chat = to_openai_tool_message(result, call_id="call_1")
    assert chat.message == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [
            {"type": "text", "text": "chart of sales"},
            {"type": "text", "text": "[image omitted: OpenAI does not take image/png here]"},
            {"type": "text", "text": "[audio omitted: OpenAI does not take audio/wav here]"},
        ],
    }
    assert len(chat.notes) == 2
    responses = to_openai_tool_message(result, call_id="call_1", api="responses")
    assert responses.message["output"][1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{PNG}",
    }
    anthropic = to_anthropic_tool_result(result, tool_use_id="toolu_1")
    assert anthropic.message["content"][:2] == [
        {"type": "text", "text": "chart of sales"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    assert anthropic.message["is_error"] is False
    gemini = to_gemini_function_response(result, name="chart")
    assert gemini.message["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "image_1.png"}}
    ]
    assert gemini.message["response"]["output"].startswith("chart of sales\n[image: image_1.png]")
    assert gemini.provenance.server_id == "charts"


def test_error_results_are_marked_for_each_provider() -> None:
    """Spec-mandated (2026-07-28 server/tools "Error Handling": errors go to the model)."""
    result = shaped({"content": [{"type": "text", "text": "no such city"}], "isError": True})
    validate(result)
    assert to_anthropic_tool_result(result, tool_use_id="t").message["is_error"] is True
    assert to_gemini_function_response(result, name="w").message["response"] == {
        "error": "no such city"
    }
    chat = to_openai_tool_message(result, call_id="c").message
    assert chat["content"][0]["text"] == "[the tool reported an error]"


def test_unshaped_results_and_bad_ids_are_caller_bugs() -> None:
    """conduit-defined: messages are built from shaped results only."""
    with pytest.raises(ValueError, match="shape_for_llm"):
        to_openai_tool_message(ToolResult.from_wire(RAW), call_id="c")
    with pytest.raises(ValueError):
        to_anthropic_tool_result(shaped(RAW), tool_use_id="")
    with pytest.raises(TypeError):
        to_gemini_function_response(shaped(RAW), name=None)  # type: ignore[arg-type]


def test_every_corpus_result_becomes_messages_the_sdks_accept() -> None:
    """Spec-mandated (provider SDK types as oracle) on every captured tools/call result."""
    count = 0
    for capture in captures():
        if capture.kind != "call-tool-result":
            continue
        data = capture.data.get("result", capture.data)
        try:
            result = ToolResult.from_wire(data)
        except Error:  # malformed captures are intake's business
            continue
        validate(shaped(result.raw))
        count += 1
    assert count > 0
