"""Provenance of a shaped result: its flags, the `Provenance` record, and the text cleaning
that sets three of the flags.

Its own module so that `_result` (which needs `Provenance` and, for `ToolResult.withheld`, the
cleaning) and `_shape` (which builds `ToolResult`s) import it, not each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ._tool import check_server_id
from ._unicode import has_hidden, strip_controls, strip_invisible

FLAG_AUDIENCE_WITHHELD: Final = "audience_withheld"
FLAG_BINARY_OMITTED: Final = "binary_omitted"
FLAG_CONTROL_CHARACTERS_REMOVED: Final = "control_characters_removed"
FLAG_INVALID_BASE64: Final = "invalid_base64"
FLAG_INVISIBLE_UNICODE_REMOVED: Final = "invisible_unicode_removed"
FLAG_LONE_SURROGATE_REPLACED: Final = "lone_surrogate_replaced"
FLAG_MIME_TYPE_MISMATCH: Final = "mime_type_mismatch"
FLAG_RESOURCE_LINK_INCOMPLETE: Final = "resource_link_incomplete"
FLAG_STRUCTURED_INVALID: Final = "structured_invalid"
FLAG_STRUCTURED_SERIALIZED: Final = "structured_serialized"
FLAG_TRUNCATED: Final = "truncated"
FLAG_UNKNOWN_CONTENT_TYPE: Final = "unknown_content_type"
FLAG_WITHHELD: Final = "withheld"

#: The closed set of provenance flags. Each names one way the shaped view differs from what the
#: server sent:
#:
#: - `audience_withheld`: a block whose `annotations.audience` does not include `"assistant"`
#:   (it is meant for the user only) was replaced by a placeholder.
#: - `binary_omitted`: an image or audio block whose MIME type the model does not accept (or that
#:   has none, or not a valid one), or an embedded blob resource, was replaced by a placeholder.
#: - `control_characters_removed`: terminal escape sequences, C0/C1 controls (except tab, LF,
#:   CR) or DEL were removed from text the model sees (serialized `structuredContent` included).
#: - `invalid_base64`: an image or audio block whose `data` is not a non-empty strict base64
#:   string (e.g. a `data:` URI) was replaced by a placeholder.
#: - `invisible_unicode_removed`: invisible characters were removed from text the model sees.
#: - `lone_surrogate_replaced`: unpaired UTF-16 surrogates (not encodable as UTF-8) became U+FFFD.
#: - `mime_type_mismatch`: an image or audio block's bytes are not the type its `mimeType`
#:   declares (by their signature); the detected type was used when the model accepts it, else
#:   the block was replaced by a placeholder.
#: - `resource_link_incomplete`: a `resource_link` block lacks a string `uri` or `name` (both
#:   required by the schema); it is shown with what it has.
#: - `structured_invalid`: the caller's output validation said `structuredContent` is invalid.
#: - `structured_serialized`: `structuredContent` was serialized into a text block.
#: - `truncated`: text was cut at `max_chars` (then `Provenance.truncated` is true as well).
#: - `unknown_content_type`: a block that is not an object, has an unknown or missing `type`, or
#:   is of a known type with fields of the wrong JSON type, was replaced by a placeholder.
#: - `withheld`: the real result was withheld by the client (`ToolResult.withheld`).
PROVENANCE_FLAGS: Final = frozenset(
    {
        FLAG_AUDIENCE_WITHHELD,
        FLAG_BINARY_OMITTED,
        FLAG_CONTROL_CHARACTERS_REMOVED,
        FLAG_INVALID_BASE64,
        FLAG_INVISIBLE_UNICODE_REMOVED,
        FLAG_LONE_SURROGATE_REPLACED,
        FLAG_MIME_TYPE_MISMATCH,
        FLAG_RESOURCE_LINK_INCOMPLETE,
        FLAG_STRUCTURED_INVALID,
        FLAG_STRUCTURED_SERIALIZED,
        FLAG_TRUNCATED,
        FLAG_UNKNOWN_CONTENT_TYPE,
        FLAG_WITHHELD,
    }
)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a shaped result came from and what shaping changed. Immutable.

    Attributes:
        server_id: the operator-assigned id of the server that produced the result.
        truncated: whether text was cut at the character cap.
        flags: names from `PROVENANCE_FLAGS`, sorted and without duplicates (the constructor
            normalizes any order).

    Raises:
        TypeError: `server_id` is not a `str`, `truncated` is not a `bool`, or a flag is not a
            `str` (caller bugs).
        ValueError: `server_id` is empty, a flag is not in `PROVENANCE_FLAGS`, or `truncated`
            disagrees with the presence of the `truncated` flag.
    """

    server_id: str
    truncated: bool
    flags: tuple[str, ...]

    def __post_init__(self) -> None:
        check_server_id(self.server_id)
        if type(self.truncated) is not bool:
            raise TypeError(f"truncated must be a bool, got {type(self.truncated).__name__}")
        flags = tuple(self.flags)
        for flag in flags:
            if not isinstance(flag, str):
                raise TypeError(f"provenance flags must be str, got {type(flag).__name__}")
            if flag not in PROVENANCE_FLAGS:
                raise ValueError(f"unknown provenance flag {flag!r}")
        normalized = tuple(sorted(set(flags)))
        if (FLAG_TRUNCATED in normalized) != self.truncated:
            raise ValueError("truncated must be true exactly when the 'truncated' flag is set")
        object.__setattr__(self, "flags", normalized)

    def as_dict(self) -> dict[str, Any]:
        """The provenance as a JSON object.

        Returns:
            A new `{"server_id": str, "truncated": bool, "flags": [str, ...]}` (flags sorted).
        """
        return {"server_id": self.server_id, "truncated": self.truncated, "flags": list(self.flags)}


# -- text -----------------------------------------------------------------------------------

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def clean_text(text: str, flags: set[str]) -> str:
    """The text as the model may see it, recording in `flags` what was removed.

    The rules of `_unicode.clean_model_text` (controls, escape sequences and invisible
    characters removed: flags `control_characters_removed`, `invisible_unicode_removed`), and
    lone surrogates replaced by U+FFFD (`lone_surrogate_replaced`).

    Args:
        text: any `str`.
        flags: the provenance flags of the result being shaped; added to, never cleared.

    Returns:
        The cleaned text (`text` itself when nothing changed).
    """
    if has_hidden(text):  # C-speed check first: most text holds nothing to remove
        text, removed = strip_controls(text)  # ASCII included: ESC, BEL, NUL, DEL are ASCII
        if removed:
            flags.add(FLAG_CONTROL_CHARACTERS_REMOVED)
        text, removed = strip_invisible(text)
        if removed:
            flags.add(FLAG_INVISIBLE_UNICODE_REMOVED)
    if text.isascii():  # O(1) for str; no surrogate is ASCII
        return text
    try:
        text.encode("utf-8")  # fails only on a lone surrogate; faster than a regex scan
    except UnicodeEncodeError:
        text = _LONE_SURROGATE.sub("\ufffd", text)
        flags.add(FLAG_LONE_SURROGATE_REPLACED)
    return text
