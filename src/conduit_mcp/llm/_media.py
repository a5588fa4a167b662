"""Media blocks for a model: the declared `mimeType`, normalized, and the type the bytes really are.

A server's `mimeType` is a label anyone can write: `" IMAGE/PNG\\n"`, 500,000 characters of bidi
and tag characters, a lone surrogate, or `image/jpeg` on PNG bytes (model providers refuse a
media block whose bytes do not match its declared type). This module turns the label into a
short, clean, canonical token before anything reads it, and reads the type from the bytes'
signature with `filetype` (pinned; pure Python, no libmagic).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Final

import filetype

from ..client._unicode import clean_model_text

#: The longest `mimeType` looked at, in characters; RFC 6838 section 4.2 bounds type and subtype
#: names to 127 characters each, and parameters are dropped anyway.
MAX_MIME_CHARS: Final = 1024

# RFC 6838 section 4.2 restricted-name, for type and subtype.
_NAME: Final = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MIME: Final = re.compile(f"{_NAME}/{_NAME}")

#: Other spellings in use for the same format, mapped to the one name used here (the IANA
#: registration where there is one). Applied to declared and detected types alike.
MIME_ALIASES: Final = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "image/apng": "image/png",  # an animated PNG is a PNG (its first chunk is IHDR)
    "image/x-png": "image/png",
    "image/x-ms-bmp": "image/bmp",
    "image/vnd.microsoft.icon": "image/x-icon",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-flac": "audio/flac",
    "audio/mp3": "audio/mpeg",
    "audio/x-mp3": "audio/mpeg",
    "audio/mpeg3": "audio/mpeg",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-aiff": "audio/aiff",
    "audio/x-midi": "audio/midi",
    "audio/mid": "audio/midi",
}

#: Base64 characters decoded for a signature: filetype reads at most 8,192 bytes.
_SIGNATURE_CHARS: Final = 8192 // 3 * 4


def normalize_mime(value: object) -> str | None:
    """The declared MIME type as one canonical token, or `None` when it is not one.

    Steps: not a `str` or longer than `MAX_MIME_CHARS` -> `None`; escape sequences, controls
    and invisible characters removed (`clean_model_text`); parameters (`;...`) dropped;
    surrounding whitespace stripped; lowercased (type and subtype are case-insensitive, RFC
    2045 section 5.1); then it must be `type/subtype` of RFC 6838 restricted names (ASCII, at
    most 127 characters each), else `None`; finally `MIME_ALIASES` applies.

    Args:
        value: the `mimeType` member as sent (anything).

    Returns:
        e.g. `"image/png"` for `" IMAGE/PNG; q=1\\n"`; `None` for `""`, `"png"`, a 2,000-character
        string, or a non-string.

    Total: O(min(len, MAX_MIME_CHARS)); never raises (lone surrogates fail the token check).
    """
    if not isinstance(value, str) or len(value) > MAX_MIME_CHARS:
        return None
    cleaned, _ = clean_model_text(value)
    token = cleaned.split(";", 1)[0].strip().lower()
    if not token.isascii() or _MIME.fullmatch(token) is None:
        return None
    return MIME_ALIASES.get(token, token)


def normalize_accepted_mime(mime: str) -> str:
    """A caller's accepted MIME type as the token `normalize_mime` compares it with.

    Lowercased, parameters dropped, `MIME_ALIASES` applied (RFC 2045 section 5.1: type and
    subtype are case-insensitive). The caller's own value, so not cleaned or checked further.
    """
    # RFC 2045: type/subtype are case-insensitive; parameters do not change the format.
    token = mime.split(";", 1)[0].strip().lower()
    return MIME_ALIASES.get(token, token)


def normalize_accepted_mime_types(values: Iterable[str]) -> frozenset[str]:
    """`shape_for_llm`'s `accepted_mime_types`, each normalized (`normalize_accepted_mime`).

    Raises:
        TypeError: `values` is a single `str`, or holds something that is not a `str`.
    """
    if isinstance(values, str):
        raise TypeError("accepted_mime_types must be a collection of str, not a single str")
    normalized = set()
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"accepted_mime_types must hold str, got {type(value).__name__}")
        normalized.add(normalize_accepted_mime(value))
    return frozenset(normalized)


def known_signature(mime: str) -> bool:
    """Whether `filetype` has a signature for this (normalized) MIME type."""
    return mime in _KNOWN


def sniff(kind: str, data: str) -> str | None:
    """The media type of base64 `data` by its signature, among formats of `kind`.

    Args:
        kind: `"image"` or `"audio"` (only that family's signatures are tried, so audio bytes
            in an image block are not an image).
        data: strict base64 (see `is_strict_base64`); only its first 10,920 characters are
            decoded.

    Returns:
        The normalized MIME type (`MIME_ALIASES` applied), or `None` when no signature matches.

    Total: O(1) in `len(data)`: at most 8,190 bytes are decoded and matched.
    """
    head = data[:_SIGNATURE_CHARS]
    try:
        raw = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return None
    matcher = filetype.image_match if kind == "image" else filetype.audio_match
    try:
        found = matcher(raw)
    except Exception:  # third-party code on hostile bytes: no signature rather than a crash
        return None
    if found is None:
        return None
    mime = str(found.mime)
    return MIME_ALIASES.get(mime, mime)


_KNOWN: Final = frozenset(
    MIME_ALIASES.get(str(t.mime), str(t.mime))
    for t in (*filetype.image_matchers, *filetype.audio_matchers)
)
