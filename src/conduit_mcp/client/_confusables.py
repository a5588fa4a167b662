"""Look-alike names: the UTS #39 skeleton, and the key under which two tool names look alike.

A rug pull can hide behind a rename a person does not see: the pinned tool `café` disappears
and `café` in NFD (`e` + U+0301), `cаfé` with a Cyrillic а, or `"café "` appears in its place,
with a new description. To a reviewer and to a model they are the same name; to a pin store
they are a new tool, pinned on first use. `lookalike_key` gives such names one key, so a
client can treat the newcomer as a change of the tool it imitates.

The confusables data is Unicode's own (`ucd/confusables.txt`, UTS #39 version 15.0.0, the
version of the other tables in `ucd/`), compiled into `_confusables_table` by
`codegen/confusables_table.py`. Normalization uses Python's `unicodedata` (Unicode 14.0.0 on
Python 3.11, 15.0.0 from 3.12): characters newer than that are left undecomposed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Final

from ._unicode import clean_model_text

__all__ = [
    "find_lookalikes",
    "lookalike_key",
    "lookalike_relation",
    "skeleton",
]

_NFD: Final = "NFD"

#: The confusables table (`_confusables_table.PROTOTYPES`, 6,311 entries), loaded by the first
#: `skeleton`: `import conduit_mcp.client` (and a proxy's start) does not pay for it.
_prototypes: dict[int, str] | None = None


def _load_prototypes() -> dict[int, str]:
    global _prototypes
    from ._confusables_table import PROTOTYPES

    _prototypes = PROTOTYPES
    return PROTOTYPES


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of `text`: two strings are confusable when their skeletons are equal.

    Args:
        text: any `str`.

    Returns:
        `NFD(map(NFD(text)))`, where `map` replaces each character that has a prototype in
        Unicode's confusables.txt (version 15.0.0) by that prototype. Not for display: it
        mixes scripts (`skeleton("cаfé")` with a Cyrillic а is `skeleton("café")`), and it
        does not fold case (`"I"` and `"l"` share a skeleton; `"A"` and `"a"` do not).

    Total: linear in the length of `text`.

    Example:
        >>> skeleton("p\\u0430ypal") == skeleton("paypal")
        True

    Spec: Unicode Technical Standard #39 (Unicode Security Mechanisms) section 4 "Confusable
    Detection", the `skeleton(X)` definition (revision 26, Unicode 15.0.0).
    """
    table = _prototypes or _load_prototypes()
    return unicodedata.normalize(_NFD, unicodedata.normalize(_NFD, text).translate(table))


def lookalike_key(name: str) -> str:
    """The key under which two names look the same to a person or a model.

    Two names with the same key are look-alikes when they are canonically equal (NFC) or
    compatibility-equal (NFKC), equal after trimming whitespace at either end, equal after
    removing characters nobody sees (invisible and control characters, as
    `conduit_mcp.client` cleans them), or confusable (the UTS #39 skeleton).

    Args:
        name: any `str` (a tool name, as sent).

    Returns:
        `skeleton(strip(clean(NFKC(name))))`: an opaque string, only to compare.

    Example:
        >>> key = lookalike_key("caf\\u00e9")
        >>> key == lookalike_key("cafe\\u0301") == lookalike_key("caf\\u00e9 ")
        True

    Spec: UTS #39 section 4 (skeleton); UAX #15 (NFC, NFKC); conduit-defined: the
    combination, and trimming (str.strip: White_Space at either end).
    """
    text = unicodedata.normalize("NFKC", name)
    text, _ = clean_model_text(text)
    return skeleton(text.strip())


def lookalike_relation(new: str, old: str) -> str:
    """Why two different names with the same `lookalike_key` look alike, in a few words.

    Args:
        new, old: two names.

    Returns:
        The first that holds: `"canonically equal (NFC)"`, `"compatibility equal (NFKC)"`,
        `"equal after trimming whitespace"`, `"equal without invisible characters"`,
        `"confusable (UTS #39 skeleton)"`; or `"not look-alikes"` when their keys differ
        (or the names are equal).
    """
    if new == old or lookalike_key(new) != lookalike_key(old):
        return "not look-alikes"
    if unicodedata.normalize("NFC", new) == unicodedata.normalize("NFC", old):
        return "canonically equal (NFC)"
    if unicodedata.normalize("NFKC", new) == unicodedata.normalize("NFKC", old):
        return "compatibility equal (NFKC)"
    if new.strip() == old.strip():
        return "equal after trimming whitespace"
    if clean_model_text(new)[0].strip() == clean_model_text(old)[0].strip():
        return "equal without invisible characters"
    return "confusable (UTS #39 skeleton)"


def find_lookalikes(names: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """Which of `names` imitate a name of `known`.

    Args:
        names: the names to check (e.g. the tools of a listing that are new).
        known: the names already trusted (pinned, or listed before), in order of preference:
            when several known names share a key, the first wins.

    Returns:
        `{name: known_name}` for every name of `names` that is not itself in `known` and has
        the `lookalike_key` of a different known name. Empty when none does.

    Total: one `lookalike_key` per name of each side (linear in their total length).

    Example:
        >>> find_lookalikes(["c\\u0430fe", "tea"], ["cafe"]) == {"c\\u0430fe": "cafe"}
        True
    """
    known_set: set[str] = set()
    by_key: dict[str, str] = {}
    for name in known:
        known_set.add(name)
        by_key.setdefault(lookalike_key(name), name)
    found: dict[str, str] = {}
    for name in names:
        if name in known_set:
            continue
        match = by_key.get(lookalike_key(name))
        if match is not None and match != name:
            found[name] = match
    return found
