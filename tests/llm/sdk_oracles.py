"""The provider SDKs' own request types, the oracles of tests/llm, imported on first use.

Real parts: openai `ChatCompletionFunctionTool(Param)`, `responses.FunctionTool(Param)`,
`ChatCompletionToolMessageParam`, `ResponseInputItemParam`; anthropic `ToolParam`,
`ToolResultBlockParam`, `MessageParam`; google-genai `types`. Importing the three SDKs and
building the pydantic adapters of their TypedDicts takes ~5 s of CPU; at module level every
xdist worker paid it while collecting, whichever worker ran the tests. `sdk()` does it once, in
the worker that runs the tests using it (one `xdist_group`, `GROUP`).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pydantic

#: The xdist group of the modules checking against these types (one worker imports the SDKs).
GROUP = "llm-sdk-oracles"


@functools.cache
def sdk() -> SimpleNamespace:
    """The SDK types and the pydantic adapters of their TypedDicts, built once a process."""
    from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam
    from google.genai import types as genai_types
    from openai.types.chat import (
        ChatCompletionFunctionTool,
        ChatCompletionFunctionToolParam,
        ChatCompletionToolMessageParam,
    )
    from openai.types.responses import FunctionTool, FunctionToolParam, ResponseInputItemParam

    return SimpleNamespace(
        genai_types=genai_types,
        ChatCompletionFunctionTool=ChatCompletionFunctionTool,
        FunctionTool=FunctionTool,
        openai_chat=pydantic.TypeAdapter(ChatCompletionFunctionToolParam),
        openai_responses=pydantic.TypeAdapter(FunctionToolParam),
        anthropic=pydantic.TypeAdapter(ToolParam),
        chat_message=pydantic.TypeAdapter(ChatCompletionToolMessageParam),
        responses_item=pydantic.TypeAdapter(ResponseInputItemParam),
        tool_result=pydantic.TypeAdapter(ToolResultBlockParam),
        message=pydantic.TypeAdapter(MessageParam),
    )
