"""Tool definitions outside `tools/list`: a server's `sampling/createMessage` and the
sampling requests inside an `input_required` result go through the same intake.

Not a public module. No SDK import.
"""

from __future__ import annotations

from typing import Any

from ..client import (
    Error,
    PathItem,
    clean_tool_text,
    intake,
    render_path,
)
from ._base import (
    _SAMPLING,
    PASS,
    EngineBase,
    Verdict,
    _replace,
)
from ._reads import FROM_SERVER
from ._servertext import report, screen, screen_from_server


class Scope(EngineBase):
    """Intake for tools a server offers the client's model (not callable on the server)."""

    # -- tool definitions outside tools/list ------------------------------------------------

    def screen_tools(
        self, tools: list[Any], version: str | None, prefix: tuple[PathItem, ...]
    ) -> list[Any] | None:
        """The same intake as a listing's for tool definitions a server sends elsewhere (the
        `tools` of a `sampling/createMessage`, 2025-11-25 on): rejected tools are removed,
        with `tool_rejected` events whose paths start at `prefix` (the path of the object
        holding `tools`, e.g. `("params",)`). Returns the tools to hand
        on, or `None` when every tool passes unchanged. With the version unknown nothing can
        be checked, so every tool is removed (event `unchecked`, decision `withheld`).

        These tools are offered to the client's own model for one sampling call, not tools
        the client can call on the server: they are neither pinned nor callable.
        """
        version = version if version is not None else self.known_version()
        if version is None:
            self.emit(
                "unchecked",
                None,
                "unknown_protocol_version",
                "withheld",
                path=(*prefix, "tools"),
                message="tool definitions not checked (protocol version unknown): withheld",
            )
            return []
        shared = self.shared
        try:
            page = intake(
                shared.server_id,
                {"tools": tools},
                transport=self.transport,
                protocol_version=version,
                trusted=shared.trusted,
            )
        except Error as exc:
            self.emit(
                "list_unreadable",
                None,
                exc.reason,
                "withheld",
                path=(*prefix, *exc.path),
                message=exc.message,
            )
            return []
        for rejection in page.rejected:
            self.emit(
                "tool_rejected",
                rejection.name,
                rejection.reason,
                "removed",
                path=(*prefix, *rejection.path),
                message=rejection.message,
            )
        dropped = {rejection.index for rejection in page.rejected}
        # What the model reads of these tools is cleaned as a listing's is (policy
        # `tool_text`): a hidden character in a name, or tool_text="block", removes the tool.
        kept: list[Any] = []
        changed = bool(dropped)
        for index, raw in enumerate(tools):
            if index in dropped:
                continue
            found = clean_tool_text(raw)
            if not found.changed and not found.identifiers:
                kept.append(raw)
                continue
            changed = True
            paths = [render_path((*prefix, "tools", index, *p)) for p in found.paths]
            if found.identifiers or self.shared.policy.tool_text == "block":
                self.emit(
                    "tool_rejected",
                    raw.get("name") if isinstance(raw.get("name"), str) else None,
                    "hidden_characters_in_name" if found.identifiers else "hidden_characters",
                    "removed",
                    path=(*prefix, "tools", index),
                    message="a sampling tool's text holds invisible or control characters",
                )
                continue
            kept.append(found.value)
            self.emit(
                "tool_text_cleaned",
                raw.get("name") if isinstance(raw.get("name"), str) else None,
                "hidden_characters_removed",
                "cleaned",
                path=(*prefix, "tools", index),
                message="hidden characters removed from a sampling tool's text",
                details={"paths": paths[:32], "count": len(paths), "flags": list(found.flags)},
            )
        return kept if changed else None

    def _on_sampling_request(self, message: dict[str, Any]) -> Verdict:
        """A server's `sampling/createMessage` with `tools` (spec 2025-11-25 client/sampling
        "Tools in Sampling"): its tool definitions go through `screen_tools` before the
        client's sampling callback (and its model) sees them."""
        params = message.get("params")
        if not isinstance(params, dict):
            return PASS
        new_params = dict(params)
        tools = params.get("tools")
        if isinstance(tools, list) and tools:
            kept = self.screen_tools(tools, None, ("params",))
            if kept is not None:
                new_params["tools"] = kept
        tools_changed = not (
            new_params == params and all(new_params[k] is params[k] for k in params)
        )
        screened = {**message, "params": new_params} if tools_changed else message
        # The server's prompt (messages, system prompt) is text the client's model reads:
        # policy `model_text` (`_reads.READS`), its tools left to `tool_text` above.
        verdict = screen_from_server(self, screened, FROM_SERVER[_SAMPLING])
        if verdict is PASS and tools_changed:
            return _replace(screened)
        return verdict

    def _screen_input_requests(self, result: Any, version: str) -> dict[str, Any] | None:
        """An `input_required` result (2026-07-28 basic/patterns/mrtr) whose `inputRequests`
        hold `sampling/createMessage` requests with `tools`: each goes through
        `screen_tools`. Returns the result to hand on, or `None` when nothing changed."""
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        if not isinstance(requests, dict):
            return None
        changed: dict[str, Any] = {}
        policy = self.shared.policy.model_text
        for key, request in requests.items():
            if not isinstance(request, dict):
                continue
            read = FROM_SERVER.get(request.get("method"))  # type: ignore[arg-type]
            if read is not None and read.kind == "request":
                # A request the client fulfils for the server (its text is cleaned with the
                # result's, under `result_text`): a hidden character in a name the answer
                # sends back, or any under model_text="block", refuses the whole result.
                judged = screen(request.get("params"), read, policy)
                if judged.refused is not None:
                    reason, where = judged.refused
                    at = ("inputRequests", key, "params")
                    report(self, read.method, judged, "answered_error", at)
                    raise InputRefused(reason, (*at, *where))
            if request.get("method") != _SAMPLING:
                continue
            params = request.get("params")
            tools = params.get("tools") if isinstance(params, dict) else None
            if not isinstance(tools, list) or not tools:
                continue
            kept = self.screen_tools(tools, version, ("inputRequests", key, "params"))
            if kept is not None:
                assert isinstance(params, dict)
                changed[key] = {**request, "params": {**params, "tools": kept}}
        if not changed:
            return None
        return {**result, "inputRequests": {**requests, **changed}}


class InputRefused(Exception):
    """An `input_required` result holds a request the guard refuses (`_screen_input_requests`):
    `reason` and `path` (from the result) for the error that answers the call instead."""

    def __init__(self, reason: str, path: tuple[Any, ...]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
