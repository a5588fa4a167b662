"""SEP-3140 content hashes of capability declarations (a proposal, not yet the spec)."""

from __future__ import annotations

import hashlib
from typing import Final

from ._errors import type_error
from ._jcs import canonical_json

#: Every SEP-3140 content hash starts with this: the hash algorithm and a dash.
CONTENT_HASH_PREFIX: Final = "sha256-"

#: The member of a declaration that carries its content hash (and is left out of it).
CONTENT_HASH_KEY: Final = "contentHash"


def content_hash(raw_tool: object) -> str:
    """The SEP-3140 content hash of one tool declaration.

    `"sha256-"` + base64url without padding (RFC 4648 section 5) of the SHA-256 of the
    RFC 8785 canonical bytes of the declaration without its `contentHash` member. Unlike
    `fingerprint()` (which hashes every byte the server sent, `contentHash` included), this is
    the value a server following SEP-3140 puts in `contentHash`.

    Args:
        raw_tool: one tool definition as parsed from JSON (a `dict`). Not mutated: a shallow
            copy drops `contentHash`.

    Returns:
        `"sha256-"` followed by 43 base64url characters.

    Raises:
        Error: kind `"protocol"`, reason `"invalid_tool"`, path `()`, when `raw_tool` is not an
            object; as `canonical_json` (`"invalid_json"`, `"limit_exceeded"`, with the path)
            when it holds a value that is not JSON.

    Total: as `canonical_json` (any depth, linear).

    Spec: proposed SEP-3140 "signed capability declarations" (per-declaration `contentHash`);
    a proposal, so intake only warns (`content_hash_mismatch`) on a mismatch.
    """
    if not isinstance(raw_tool, dict):
        raise type_error("invalid_tool", (), "an object", raw_tool)
    if CONTENT_HASH_KEY in raw_tool:
        raw_tool = {k: v for k, v in raw_tool.items() if k != CONTENT_HASH_KEY}
    digest = hashlib.sha256(canonical_json(raw_tool)).digest()
    import base64  # asked only for a tool that carries a content hash: not with the package

    return CONTENT_HASH_PREFIX + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
