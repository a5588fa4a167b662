"""Shaping a tool result for a model: what of a `CallToolResult` reaches the LLM, and how.

The spec leaves the model's view to the client: "It is up to the client how best to render
embedded resources for the benefit of the LLM and/or the user" (2026-07-28 schema
`EmbeddedResource`), and clients "SHOULD: Validate tool results before passing to LLM"
(2026-07-28 server/tools "Security Considerations"). This module makes that view explicit:
`shape_for_llm` returns a new `ToolResult` whose `content` is what a model may see and whose
`provenance` records where it came from and everything that was changed on the way.

Rules (one place; each is a decision where the spec is silent):

- every string that reaches the model (text, link and resource labels, the strings of
  serialized `structuredContent`) is cleaned by the rules of `_unicode.clean_model_text`:
  terminal escape sequences removed whole, C0/C1 controls and DEL except tab/LF/CR removed, and
  invisible characters (Default_Ignorable_Code_Point and Cf: zero-width, bidi controls, tag
  characters, variation selectors) removed; lone surrogates become U+FFFD. In the shaped view
  only: `raw` keeps what the server sent.
- a block whose `annotations.audience` is a list without `"assistant"` is for the user only
  (2026-07-28 schema `Annotations.audience`) and is replaced by a placeholder.
- all text that reaches the model (text blocks, placeholders, serialized `structuredContent`) is
  capped at `max_chars` Python characters, the truncation marker included; the head is kept.
  Image and audio blocks are not text and are not cut by the cap.
- `structuredContent` is serialized as compact JSON into a text block when the content would
  otherwise show the model nothing (no non-blank text, no placeholder, no kept image/audio), so a
  result with only `structuredContent` never shapes to an empty message. Otherwise the content
  is presumed to be its equivalent: "a tool that returns structured content SHOULD also return
  the serialized JSON in a TextContent block", and servers that wrap media in
  `structuredContent` would else have their base64 sent again as text.
- images and audio are kept only when `data` is strict base64 (RFC 4648 alphabet with padding,
  no whitespace, not empty; a `data:` URI is not base64), the MIME type (normalized first:
  `_media.normalize_mime`) is one the caller says the model accepts, and the bytes' signature
  (`filetype`) does not contradict it; bytes of another accepted type are sent as that type;
  otherwise a one-line placeholder replaces them.
- `resource_link` blocks are shown by URI (and name); embedded text resources by their text;
  embedded blobs by a placeholder.
- anything else (unknown `type`, not an object, a known type with fields of the wrong type) is a
  placeholder, never an exception.
- `isError` results keep their content: "Clients SHOULD provide tool execution errors to
  language models to enable self-correction" (2026-07-28 server/tools "Error Handling").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final, Literal

from ..client import _provenance as pv
from ..client import _wire as w
from ..client._provenance import Provenance
from ..client._provenance import clean_text as _clean
from ..client._result import ToolResult
from ..client._tool import check_server_id
from ..client._unicode import has_hidden
from ._json_writer import dump_json
from ._media import known_signature, normalize_accepted_mime_types, normalize_mime, sniff

# -- provenance (the flags and the record live in `_provenance.py`) --------------------------


def _provenance(server_id: str, flags: set[str]) -> Provenance:
    # Internal fast path: `flags` holds only known names, and `truncated` follows from them.
    provenance = object.__new__(Provenance)
    setter = object.__setattr__
    setter(provenance, "server_id", server_id)
    setter(provenance, "truncated", pv.FLAG_TRUNCATED in flags)
    setter(provenance, "flags", tuple(sorted(flags)))
    return provenance


# -- options --------------------------------------------------------------------------------

#: Default cap on the characters of text a shaped result carries: 100,000 Python characters,
#: roughly 25,000 tokens of English (the order of the tool-output caps agent hosts ship with).
DEFAULT_MAX_CHARS: Final = 100_000

#: The smallest allowed `max_chars`: longer than any truncation marker (whose numbers have at
#: most 19 digits each), so the capped text always has room for the marker.
MIN_MAX_CHARS: Final = 80

#: Default MIME types of image/audio blocks passed to the model: the four image formats every
#: major model API accepts. Audio is opt-in (most model APIs take no audio input).
DEFAULT_ACCEPTED_MIME_TYPES: Final = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp"}
)

IncludeStructured = Literal["auto", "always", "never"]
"""When `structuredContent` is serialized into the shaped text (see `shape_for_llm`)."""

_INCLUDE_STRUCTURED: Final = frozenset({"auto", "always", "never"})

# The RFC 4648 section 4 alphabet, deleted with `bytes.translate` to check base64 without
# decoding it (about twice as fast as a regex scan: images are the big strings here).
_BASE64_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

_AUDIENCE: Final = "audience"
_ASSISTANT: Final = "assistant"

# Server-chosen words quoted in placeholders (a block type, a MIME type) are capped: they are
# labels, not content.
_LABEL_CHARS: Final = 64

#: The content block types `_shape_block` shows the model (each has its own branch there).
SHAPED_BLOCK_TYPES: Final = frozenset(
    {w.TYPE_TEXT, w.TYPE_IMAGE, w.TYPE_AUDIO, w.TYPE_RESOURCE_LINK, w.TYPE_RESOURCE}
)

#: Content block types a spec version defines that are shown as "[content block omitted:
#: unsupported type ...]" on purpose (decided at the spec bump that brought them; `make bump`'s
#: checklist names a new type). tests/llm/test_block_types.py checks that every block type of
#: every registered version is in one of the two sets.
OMITTED_BLOCK_TYPES: Final[frozenset[str]] = frozenset()


# -- public API -----------------------------------------------------------------------------


def shape_for_llm(
    result: ToolResult,
    *,
    server_id: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    accepted_mime_types: Iterable[str] = DEFAULT_ACCEPTED_MIME_TYPES,
    include_structured: IncludeStructured = "auto",
    validation: object | None = None,
) -> ToolResult:
    """Build the view of a tool result that a model may see, with provenance.

    The shaped `content` is a new list of new blocks, only of two kinds: text blocks
    `{"type": "text", "text": str}` and kept media blocks `{"type": "image" | "audio",
    "data": str, "mimeType": str}` (annotations and `_meta` are not carried into the model's
    view). Block by block (rules in the module docstring):

    - any block whose `annotations.audience` is a list without `"assistant"`:
      `[content withheld: meant for the user only]` (flag `audience_withheld`).
    - `text`: its text, cleaned: escape sequences and controls removed (flag
      `control_characters_removed`), invisible characters removed (flag
      `invisible_unicode_removed`), lone surrogates replaced.
    - `image` / `audio`: `mimeType` is first normalized (escapes, controls and invisibles
      removed, parameters dropped, whitespace stripped, lowercased, common aliases such as
      `image/jpg` and `audio/x-wav` mapped; more than 1,024 characters or not an RFC 6838
      `type/subtype` token: `[image omitted: not a valid MIME type]`). Kept, with the normalized
      `mimeType`, when `data` is strict base64, the type is in `accepted_mime_types`, and the
      signature of the first 8,190 bytes agrees. When the signature is of another type the
      block is sent as that type if it is accepted, else replaced (flag `mime_type_mismatch`
      either way; `[image omitted: data is not image/png]` when no signature of the family
      matches a type whose signature is known). Other placeholders:
      `[image omitted: data is not valid base64]` (flag `invalid_base64`),
      `[image omitted: image/svg+xml is not an accepted type]` (flag `binary_omitted`).
    - `resource_link`: `[resource link: <name>] <uri>` (flag `resource_link_incomplete` when
      `uri` or `name` is missing).
    - `resource` (embedded): text resources as `[embedded resource] <uri>` + newline + text;
      blobs as `[embedded resource] <uri> (<mimeType>, binary content omitted)` (flag
      `binary_omitted`; the blob is not decoded or checked).
    - anything else: `[content block omitted: ...]` (flag `unknown_content_type`).

    `structuredContent` (when the key was present, even as `null`) is appended as compact JSON
    (non-ASCII kept, member order kept, integers exact, NaN and infinities as `null`; every
    string and member name cleaned first, since JSON would spell a control as `\\u001b`) when
    `include_structured` is `"always"`, or `"auto"` and the shaped content has no non-blank
    text (placeholders count) and no kept image/audio; `"never"` leaves it out.
    Then all text is capped at `max_chars`: past the cap, the text block where the cap falls
    ends with `\\n[… truncated: showing N of M characters]` and later text blocks are dropped.

    The shaped result keeps `is_error`, `structured`, `meta`, `extra` and `raw` (the original
    wire object) as they are. Nothing the caller passed is mutated. Re-shaping a shaped result
    keeps its earlier flags.

    Args:
        result: the result to shape.
        server_id: the operator-assigned id of the server that produced it (non-empty `str`).
        max_chars: cap on the Python characters (code points) of all text in the shaped content,
            the marker included; at least `MIN_MAX_CHARS`.
        accepted_mime_types: MIME types of image/audio blocks the model accepts (default
            `DEFAULT_ACCEPTED_MIME_TYPES`: PNG, JPEG, GIF, WebP; no audio).
        include_structured: `"auto"`, `"always"` or `"never"` (see above).
        validation: the outcome of validating `structuredContent` against the tool's
            `outputSchema`, as any object with an `outcome` attribute (e.g. `OutputValidation`);
            `outcome == "invalid"` adds flag `structured_invalid` (the content still reaches the
            model, flagged). `None`: not validated.

    Returns:
        A new `ToolResult` with the shaped `content` and a `Provenance`.

    Raises:
        TypeError: `result` is not a `ToolResult`, `server_id` is not a `str`, `max_chars` is
            not an `int`, or `accepted_mime_types` is a `str` or holds a non-`str` (caller bugs).
        ValueError: `server_id` is empty, `max_chars < MIN_MAX_CHARS`, or `include_structured`
            is not one of the three values.
        Error: kind `"protocol"`, reason `"invalid_json"`, `details["got"] == "cycle"`, path
            from `("structuredContent",)`, when a hand-built `structuredContent` contains itself
            (the one treatment of cycles; no JSON parser produces one).

    Total: linear in the size of the content (each string is scanned a constant number of
    times; base64 is checked, never decoded). Blocks are looked at one level deep; nested
    `structuredContent` of any depth (or with values JSON cannot hold) is serialized with an
    explicit stack when the C encoder gives up, so depth never raises `RecursionError`.

    Spec: 2026-07-28 server/tools "Tool Result", "Structured Content" ("a tool that returns
    structured content SHOULD also return the serialized JSON in a TextContent block"), "Error
    Handling" (clients SHOULD provide tool execution errors to language models) and "Security
    Considerations" (clients SHOULD validate tool results before passing to LLM); schema
    `Annotations.audience`, `ImageContent.data` / `AudioContent.data` (`format: byte`: base64)
    and `.mimeType`.
    """
    if not isinstance(result, ToolResult):
        raise TypeError(f"result must be a ToolResult, got {type(result).__name__}")
    check_server_id(server_id)
    if type(max_chars) is not int:
        raise TypeError(f"max_chars must be an int, got {type(max_chars).__name__}")
    if max_chars < MIN_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {MIN_MAX_CHARS}, got {max_chars}")
    if accepted_mime_types is DEFAULT_ACCEPTED_MIME_TYPES:
        accepted = DEFAULT_ACCEPTED_MIME_TYPES  # already normalized
    else:
        accepted = normalize_accepted_mime_types(accepted_mime_types)
    if include_structured not in _INCLUDE_STRUCTURED:
        raise ValueError("include_structured must be 'auto', 'always' or 'never'")

    flags: set[str] = set()
    if result.provenance is not None:
        flags.update(result.provenance.flags)
    # Each item is a text block's text (str) or a kept media block (dict).
    items: list[str | dict[str, Any]] = []
    shows_something = False
    content = result.content
    if not isinstance(content, (list, tuple)):
        flags.add(pv.FLAG_UNKNOWN_CONTENT_TYPE)
        items.append("[content omitted: not an array]")
        content = ()
    for block in content:
        shaped = _shape_block(block, accepted, flags)
        if not shows_something and (
            not isinstance(shaped, str) or (shaped and not shaped.isspace())
        ):
            shows_something = True
        items.append(shaped)

    if result.has_structured and (
        include_structured == "always" or (include_structured == "auto" and not shows_something)
    ):
        structured = _clean_structured(result.structured, flags)
        items.append(_clean(dump_json(structured), flags))
        flags.add(pv.FLAG_STRUCTURED_SERIALIZED)
    if validation is not None and getattr(validation, "outcome", None) == "invalid":
        flags.add(pv.FLAG_STRUCTURED_INVALID)

    items = _cap(items, max_chars, flags)
    shaped_content: list[dict[str, Any]] = [
        {w.BLOCK_TYPE: w.TYPE_TEXT, w.BLOCK_TEXT: item} if isinstance(item, str) else item
        for item in items
    ]
    return ToolResult(
        content=shaped_content,
        structured=result.structured,
        has_structured=result.has_structured,
        is_error=result.is_error,
        meta=result.meta,
        extra=result.extra,
        raw=result.raw,
        provenance=_provenance(server_id, flags),
    )


def shaped_text(result: ToolResult) -> str:
    """The text of a result's text blocks, joined with newlines.

    Meant for shaped results (whose text blocks are exactly what the model reads); on any
    result, blocks that are not `{"type": "text", "text": <str>}` objects are skipped.

    Args:
        result: a `ToolResult`, usually from `shape_for_llm`.

    Returns:
        The texts joined with `"\\n"` (so at most `max_chars + blocks - 1` characters for a
        shaped result); `""` when there are none.

    Raises:
        TypeError: `result` is not a `ToolResult` (a caller bug).
    """
    if not isinstance(result, ToolResult):
        raise TypeError(f"result must be a ToolResult, got {type(result).__name__}")
    content = result.content if isinstance(result.content, (list, tuple)) else ()
    return "\n".join(
        block[w.BLOCK_TEXT]
        for block in content
        if isinstance(block, dict)
        and block.get(w.BLOCK_TYPE) == w.TYPE_TEXT
        and isinstance(block.get(w.BLOCK_TEXT), str)
    )


# -- blocks ---------------------------------------------------------------------------------


def _shape_block(block: object, accepted: frozenset[str], flags: set[str]) -> str | dict[str, Any]:
    if not isinstance(block, dict):
        flags.add(pv.FLAG_UNKNOWN_CONTENT_TYPE)
        return "[content block omitted: not an object]"
    if _for_user_only(block):
        flags.add(pv.FLAG_AUDIENCE_WITHHELD)
        return "[content withheld: meant for the user only]"
    kind = block.get(w.BLOCK_TYPE)
    if kind == w.TYPE_TEXT:
        text = block.get(w.BLOCK_TEXT)
        if isinstance(text, str):
            return _clean(text, flags)
        return _malformed("text", flags)
    if kind == w.TYPE_IMAGE or kind == w.TYPE_AUDIO:
        return _shape_media(block, kind, accepted, flags)
    if kind == w.TYPE_RESOURCE_LINK:
        return _shape_resource_link(block, flags)
    if kind == w.TYPE_RESOURCE:
        return _shape_embedded(block, flags)
    flags.add(pv.FLAG_UNKNOWN_CONTENT_TYPE)
    if isinstance(kind, str):
        return f"[content block omitted: unsupported type {_label(kind, flags)}]"
    return "[content block omitted: no type]"


def _for_user_only(block: dict[str, Any]) -> bool:
    # Spec (2026-07-28 schema `Annotations.audience`): "Describes who the intended audience of
    # this object or data is"; a list without "assistant" (e.g. ["user"], or []) is not for the
    # model. A missing or malformed `annotations`/`audience` says nothing: the block stays.
    annotations = block.get(w.ANNOTATIONS)
    if not isinstance(annotations, dict):
        return False
    audience = annotations.get(_AUDIENCE)
    return isinstance(audience, list) and _ASSISTANT not in audience


def _malformed(kind: str, flags: set[str]) -> str:
    flags.add(pv.FLAG_UNKNOWN_CONTENT_TYPE)
    return f"[content block omitted: malformed {kind} block]"


def _shape_media(
    block: dict[str, Any], kind: str, accepted: frozenset[str], flags: set[str]
) -> str | dict[str, Any]:
    data = block.get(w.BLOCK_DATA)
    if not isinstance(data, str) or not is_strict_base64(data):
        flags.add(pv.FLAG_INVALID_BASE64)
        return f"[{kind} omitted: data is not valid base64]"
    declared = block.get(w.BLOCK_MIME_TYPE)
    mime = normalize_mime(declared)  # before anything reads it: a short canonical token
    if mime is None:
        flags.add(pv.FLAG_BINARY_OMITTED)
        if not isinstance(declared, str) or not declared:
            return f"[{kind} omitted: no MIME type]"
        return f"[{kind} omitted: not a valid MIME type]"
    if known_signature(mime) or mime in accepted:
        real = sniff(kind, data)
        if real != mime and (real is not None or known_signature(mime)):
            flags.add(pv.FLAG_MIME_TYPE_MISMATCH)
            if real is None:
                flags.add(pv.FLAG_BINARY_OMITTED)
                return f"[{kind} omitted: data is not {mime}]"
            mime = real
    if mime not in accepted:
        flags.add(pv.FLAG_BINARY_OMITTED)
        return f"[{kind} omitted: {mime} is not an accepted type]"
    return {w.BLOCK_TYPE: kind, w.BLOCK_DATA: data, w.BLOCK_MIME_TYPE: mime}


def _shape_resource_link(block: dict[str, Any], flags: set[str]) -> str:
    uri = block.get(w.BLOCK_URI)
    name = block.get(w.NAME)
    uri = uri if isinstance(uri, str) and uri else None
    name = name if isinstance(name, str) and name else None
    if uri is None or name is None:
        flags.add(pv.FLAG_RESOURCE_LINK_INCOMPLETE)
    head = "[resource link]" if name is None else f"[resource link: {_clean(name, flags)}]"
    return f"{head} (no URI)" if uri is None else f"{head} {_clean(uri, flags)}"


def _shape_embedded(block: dict[str, Any], flags: set[str]) -> str:
    resource = block.get(w.BLOCK_RESOURCE)
    if not isinstance(resource, dict):
        return _malformed("resource", flags)
    uri = resource.get(w.BLOCK_URI)
    head = "[embedded resource]"
    if isinstance(uri, str) and uri:
        head = f"{head} {_clean(uri, flags)}"
    text = resource.get(w.BLOCK_TEXT)
    if isinstance(text, str):
        return f"{head}\n{_clean(text, flags)}"
    if w.BLOCK_BLOB in resource:
        flags.add(pv.FLAG_BINARY_OMITTED)
        mime = normalize_mime(resource.get(w.BLOCK_MIME_TYPE))
        if mime is not None:
            return f"{head} ({mime}, binary content omitted)"
        return f"{head} (binary content omitted)"
    return _malformed("resource", flags)


def is_strict_base64(value: object) -> bool:
    """Whether `value` is a non-empty string of strict base64.

    Args:
        value: anything.

    Returns:
        `True` exactly when `value` is a non-empty `str` that
        `base64.b64decode(value, validate=True)` accepts: the RFC 4648 section 4 alphabet, length
        a multiple of 4, at most two `=` of padding at the end, no whitespace or line breaks.
        A `data:` URI, the URL-safe alphabet and MIME-style wrapped base64 are `False`.

    Total: a few linear C passes, no decoding (O(len) time and transient memory).

    Spec: 2026-07-28 schema `ImageContent.data` / `AudioContent.data` (`format: byte`).
    """
    if not isinstance(value, str) or not value or len(value) % 4 or not value.isascii():
        return False
    body = value.rstrip("=")
    if len(value) - len(body) > 2:
        return False
    # Whatever is left after deleting the alphabet is a stray character (or an inner `=`).
    return not body.encode("ascii").translate(None, _BASE64_ALPHABET)


# -- text -----------------------------------------------------------------------------------


def _label(value: str, flags: set[str], *, quote: bool = True) -> str:
    value = _clean(value, flags)
    if len(value) > _LABEL_CHARS:
        value = value[:_LABEL_CHARS] + "…"
    return json.dumps(value, ensure_ascii=False) if quote else value


def _marker(shown: int, total: int) -> str:
    return f"\n[… truncated: showing {shown} of {total} characters]"


def _cap(items: list[str | dict[str, Any]], max_chars: int, flags: set[str]) -> list[Any]:
    """Cut text to `max_chars` characters including the marker; media items pass through."""
    total = 0
    for item in items:
        if isinstance(item, str):
            total += len(item)
    if total <= max_chars:
        return items
    # The marker's own length depends on the numbers in it; `shown` fewer digits never
    # lengthens it, so this budget always fits.
    budget = max_chars - len(_marker(max_chars, total))
    marker = _marker(budget, total)
    flags.add(pv.FLAG_TRUNCATED)
    capped: list[Any] = []
    remaining = budget
    cut = False
    for item in items:
        if not isinstance(item, str):
            capped.append(item)
        elif cut:
            continue
        elif len(item) <= remaining:
            capped.append(item)
            remaining -= len(item)
        else:
            # No surrogate pair can be split: `_clean` left no surrogates in the text.
            head = item[:remaining]
            capped.append(head + marker if head else marker[1:])
            cut = True
    return capped


# -- JSON for structuredContent -------------------------------------------------------------


def _plain(text: str) -> bool:
    # No escape, control or invisible character (checked at C speed), and no lone surrogate
    # (which `_clean` replaces).
    if text.isascii():
        return text.isprintable() or not has_hidden(text)
    if has_hidden(text):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _clean_structured(value: Any, flags: set[str]) -> Any:
    """`value` with every string (member names included) cleaned by `_clean`, for serializing.

    JSON escapes C0 controls (`\\u001b`), so they must go before serialization, or the model
    would read the escape sequence spelled out. Returns `value` itself when no string needs
    cleaning; otherwise a copy (explicit stack; shared and cyclic containers stay so). When two
    member names clean to the same name, the first member is kept.
    """
    if not _needs_cleaning(value):
        return value
    if isinstance(value, str):
        return _clean(value, flags)
    memo: dict[int, Any] = {}
    root: Any = {} if isinstance(value, dict) else []
    memo[id(value)] = root
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, (dict, list)):
                copied = memo.get(id(item))
                if copied is None:
                    copied = memo[id(item)] = {} if isinstance(item, dict) else []
                    stack.append((item, copied))
            elif isinstance(item, str):
                copied = _clean(item, flags)
            else:
                copied = item
            if isinstance(target, dict):
                if isinstance(key, str):
                    key = _clean(key, flags)
                target.setdefault(key, copied)
            else:
                target.append(copied)
    return root


def _needs_cleaning(value: Any) -> bool:
    if isinstance(value, str):
        return not _plain(value)
    if not isinstance(value, (dict, list)):
        return False
    seen: set[int] = {id(value)}
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            if isinstance(key, str) and isinstance(node, dict) and not _plain(key):
                return True
            if isinstance(item, str):
                if not _plain(item):
                    return True
            elif isinstance(item, (dict, list)) and id(item) not in seen:
                seen.add(id(item))
                stack.append(item)
    return False
