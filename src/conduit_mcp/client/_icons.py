"""Icon sources a client may show, and intake's warning for the others.

Not a public module: intake warns `icon_unsafe_uri` per unsafe icon of a tool; the guard leaves
those icons out of what the SDK sees.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ._errors import PathItem
from ._warnings import IntakeWarning

#: A URI scheme (RFC 3986 section 3.1) at the start of an icon `src`.
_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def icon_src_is_safe(src: str) -> bool:
    """Whether an icon `src` may be shown: an absolute `https:` or `http:` URL, or a
    `data:image/...` URI. Everything else is unsafe (`javascript:`, `file:`, `ftp:`, `ws:`,
    app schemes, and relative references, which resolve against whatever base the host has).

    Spec: 2026-07-28 basic/index "Icons" (clients MUST reject icon URIs that use unsafe
    schemes, such as javascript:, file:, ftp:, ws:, or local app URI schemes); schema
    `Icon.src` ("May be an HTTP/HTTPS URL or a data: URI", format uri).
    """
    match = _SCHEME.match(src)
    if match is None:
        return False
    scheme = match.group(1).lower()
    if scheme in ("https", "http"):
        return src[match.end() : match.end() + 2] == "//"
    return scheme == "data" and src[match.end() :].lower().startswith("image/")


def icon_warnings(icons: list[Any], prefix: tuple[PathItem, ...]) -> list[IntakeWarning]:
    """`icon_unsafe_uri` for each icon of `icons` whose string `src` is not safe to show
    (`icon_src_is_safe`); the path is `prefix + (i, "src")`."""
    found = []
    for i, icon in enumerate(icons):
        src = icon.get("src") if isinstance(icon, dict) else None
        if isinstance(src, str) and not icon_src_is_safe(src):
            match = _SCHEME.match(src)
            found.append(
                IntakeWarning(
                    "icon_unsafe_uri",
                    (*prefix, i, "src"),
                    "icon src is not an https/http URL or a data:image URI; do not show it",
                    {"scheme": match.group(1).lower()[:32] if match else "relative"},
                )
            )
    return found
