"""What a model may read of a tool definition and of a tool result: hidden characters removed.

The rules are those of `_unicode.clean_model_text` (terminal escape sequences removed whole,
C0/C1 controls and DEL except TAB/LF/CR, invisible characters) and of `_provenance.clean_text`
(lone surrogates become U+FFFD), applied to every string a model reads:

- of a tool: every string of the definition. A client hands the model the whole
  `inputSchema` (its `$comment`s and custom keywords too), and more of the tool than
  `_model_view.iter_model_text` names (`_meta`, `icons`): whatever a model may be shown is
  cleaned. Names the model must send back exactly (the tool's `name`, property names), and any
  other object key, are never rewritten: a key holding a hidden character is reported in
  `CleanedText.identifiers` for the caller to refuse the tool.
- of a `tools/call` result: `text` of text blocks, `resource.text` of embedded resources, and
  every string of `structuredContent` (object keys included).

Neither function mutates its input: a changed value is a copy, an unchanged one is the input
itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from . import _wire as w
from ._errors import PathItem
from ._jsoncopy import copy_json
from ._model_view import _maybe_hidden, iter_model_text
from ._provenance import clean_text
from ._unicode import has_hidden

__all__ = ["CleanedText", "clean_result_text", "clean_tool_text"]

_CONTENT: Final = w.CONTENT
_STRUCTURED: Final = w.STRUCTURED_CONTENT


@dataclass(frozen=True, slots=True)
class CleanedText:
    """A JSON value with hidden characters removed from the text a model reads. Immutable.

    Attributes:
        value: the cleaned value: a copy when something was removed, else the value given
            (the same object).
        paths: the place of every string that was cleaned, as keys and indexes from the value's
            root (`("description",)`, `("content", 0, "text")`), in walk order.
        flags: provenance flags (`conduit_mcp.llm` names them): `"control_characters_removed"`,
            `"invisible_unicode_removed"`, `"lone_surrogate_replaced"`; sorted.
        identifiers: for a tool: the place of each name a model must send back exactly (the
            tool's `name`, a property name) that holds a hidden character; those are left as
            sent, and a client should not offer the tool. Empty for a result.
    """

    value: Any
    paths: tuple[tuple[PathItem, ...], ...] = ()
    flags: tuple[str, ...] = ()
    identifiers: tuple[tuple[PathItem, ...], ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any string was cleaned."""
        return bool(self.paths)


def clean_tool_text(raw: object) -> CleanedText:
    """Remove hidden characters from every string of a tool definition a model reads.

    Args:
        raw: a tool object as sent (`Tool.raw`, or a dict that passed the shape check); never
            mutated. Anything but a `dict` comes back unchanged.

    Returns:
        A `CleanedText`: `value` is the definition the model may see (a deep copy when a
        string changed); `paths` from the tool object (`("inputSchema", "properties", "q",
        "description")`, `("inputSchema", "$comment")`, `("_meta", "note")`): every string
        of the definition is cleaned, not only the ones `iter_model_text` names;
        `identifiers`: the `("name",)` path when the tool's name holds a hidden character,
        and the path of each object key that does (a property name, a `_meta` key, a custom
        keyword: all left as sent; a call must name properties exactly). Values inside
        `enum`, `const`, `default` and `examples` are cleaned like prose: a call that uses
        the cleaned value then fails the server's schema (so it is refused, never sent with a
        guessed value).

    Raises:
        Error: as `iter_model_text` (a schema that contains itself).

    Total: one scan at C speed when the tool holds no hidden character (the common case);
    otherwise one walk and one copy, linear in the size of the tool.

    Spec: 2026-07-28 server/tools "Security Considerations" (clients SHOULD treat tool
    descriptions from untrusted servers with care); conduit-defined: what is cleaned.
    """
    if not isinstance(raw, dict):
        return CleanedText(raw)
    edits: list[tuple[tuple[PathItem, ...], str]] = []
    identifiers: list[tuple[PathItem, ...]] = []
    flags: set[str] = set()
    seen: set[tuple[PathItem, ...]] = set()
    for item in iter_model_text(raw, plain=False):
        path = item.path
        seen.add(path)
        if item.is_key or path == (w.NAME,):
            identifiers.append(path)
            continue
        cleaned = clean_text(item.text, flags)
        if cleaned != item.text:
            edits.append((path, cleaned))
    if _maybe_hidden(raw):  # strings outside the model view: `$comment`, `_meta`, `icons`, ...
        for path, text, is_key in _strings(raw, ()):
            if path in seen or not has_hidden(text):
                continue
            if is_key:
                identifiers.append(path)
                continue
            cleaned = clean_text(text, flags)
            if cleaned != text:
                edits.append((path, cleaned))
    if not edits:
        return CleanedText(raw, identifiers=tuple(identifiers))
    copy = copy_json(raw)
    for path, text in edits:
        node: Any = copy
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = text
    return CleanedText(copy, tuple(p for p, _ in edits), tuple(sorted(flags)), tuple(identifiers))


def _strings(
    value: Any, path: tuple[PathItem, ...]
) -> Iterator[tuple[tuple[PathItem, ...], str, bool]]:
    """Every string of a JSON value, `(path, text, is_key)`; a key at the path of its value.
    Iterative (a stack, not recursion): a tool nested deeper than Python's recursion limit is
    walked like any other."""
    stack: list[tuple[tuple[PathItem, ...], Any]] = [(path, value)]
    while stack:
        here, node = stack.pop()
        if isinstance(node, str):
            yield here, node, False
        elif isinstance(node, dict):
            members = []
            for key, member in node.items():
                inner = (*here, key)
                if isinstance(key, str):
                    yield inner, key, True
                members.append((inner, member))
            stack.extend(reversed(members))
        elif isinstance(node, list):
            stack.extend(reversed([((*here, i), m) for i, m in enumerate(node)]))


def clean_result_text(result: object) -> CleanedText:
    """Remove hidden characters from the text of a `tools/call` result that a model reads.

    Args:
        result: the `result` member of a `tools/call` response, as parsed from JSON; never
            mutated. Members of the wrong type are skipped, never an error; anything but a
            `dict` comes back unchanged.

    Returns:
        A `CleanedText`: `value` is the result the model may see (a copy when a string
        changed); `paths` from the result object: `("content", i, "text")` for a text block,
        `("content", i, w.BLOCK_RESOURCE, "text")` for an embedded text resource, and
        `("structuredContent", ...)` for a string (or an object key, path to that member as
        it is now named) inside structured content, and the path of any other string of the
        result (a resource link's `name`/`title`/`description`/`uri`, `_meta` values). A key
        whose cleaned form is already taken
        in its object gets U+FFFD appended until it is free (visible, nothing dropped).

    Total: C-speed scans when nothing is hidden (`has_hidden` per text, one orjson pass over
    `structuredContent`); otherwise linear in the size of the result.

    Spec: 2026-07-28 server/tools "Tool Result" (text content, embedded resources,
    structuredContent) and "Security Considerations" (clients SHOULD validate tool results
    before passing them to the LLM); conduit-defined: what is cleaned.
    """
    if not isinstance(result, dict):
        return CleanedText(result)
    content = result.get(_CONTENT)
    blocks: list[int] = []
    if type(content) is list:
        for index, block in enumerate(content):
            if type(block) is not dict:
                continue
            text = block.get(w.BLOCK_TEXT)
            if (  # the common block, told clean inline: printable ASCII, no resource
                type(text) is str
                and text.isascii()
                and text.isprintable()
                and w.BLOCK_RESOURCE not in block
            ):
                continue
            if _block_dirty(block):
                blocks.append(index)
    structured = result.get(_STRUCTURED)
    dirty_structured = (type(structured) is dict or type(structured) is list) and _maybe_hidden(
        structured
    )
    if type(structured) is str:
        dirty_structured = _dirty(structured)
    # Resource links, URIs, `_meta`, annotations, ...: none in a result of text blocks only,
    # whose other strings the block scan has seen already.
    rest: dict[str, Any] = {}
    dirty_rest = False
    if not _text_blocks_only(result, content):
        rest = {key: value for key, value in result.items() if key != _STRUCTURED}
        dirty_rest = _maybe_hidden(rest)
    if not blocks and not dirty_structured and not dirty_rest:
        return CleanedText(result)
    flags: set[str] = set()
    paths: list[tuple[PathItem, ...]] = []
    copy = dict(result)
    if blocks:
        assert type(content) is list
        new_content = list(content)
        for index in blocks:
            block = new_content[index] = dict(new_content[index])
            text = block.get(w.BLOCK_TEXT)
            if type(text) is str:
                cleaned = clean_text(text, flags)
                if cleaned != text:
                    block[w.BLOCK_TEXT] = cleaned
                    paths.append((_CONTENT, index, w.BLOCK_TEXT))
            resource = block.get(w.BLOCK_RESOURCE)
            if type(resource) is dict and type(resource.get(w.BLOCK_TEXT)) is str:
                text = resource[w.BLOCK_TEXT]
                cleaned = clean_text(text, flags)
                if cleaned != text:
                    block[w.BLOCK_RESOURCE] = {**resource, w.BLOCK_TEXT: cleaned}
                    paths.append((_CONTENT, index, w.BLOCK_RESOURCE, w.BLOCK_TEXT))
        copy[_CONTENT] = new_content
    if dirty_structured:
        copy[_STRUCTURED] = _clean_structured(structured, flags, paths)
    if dirty_rest:
        # Every other string a client may show the model: a resource link's name, title,
        # description and uri, an embedded resource's uri, `_meta` values, annotations.
        done = set(paths)
        edits = []
        for path, text, is_key in _strings(rest, ()):
            if is_key or path in done or not _dirty(text):
                continue
            cleaned = clean_text(text, flags)
            if cleaned != text:
                edits.append((path, cleaned))
        if edits:
            for key in {path[0] for path, _ in edits}:
                copy[key] = copy_json(copy[key])
            for path, text in edits:
                node: Any = copy
                for step in path[:-1]:
                    node = node[step]
                node[path[-1]] = text
                paths.append(path)
    if not paths:  # only lone surrogates looked suspicious to the scan, and none were there
        return CleanedText(result)
    return CleanedText(copy, tuple(dict.fromkeys(paths)), tuple(sorted(flags)))


#: The members of a result whose only strings, besides the text blocks' texts, are fixed words.
_PLAIN_MEMBERS: Final = frozenset({_CONTENT, _STRUCTURED, w.IS_ERROR, w.RESULT_TYPE})
_TEXT_BLOCK: Final = frozenset({w.BLOCK_TYPE, w.BLOCK_TEXT})


def _text_blocks_only(result: dict[str, Any], content: object) -> bool:
    """Whether every string of `result` outside `structuredContent` is a text block's `text`
    or a fixed ASCII word (`"text"`, `"complete"`): then the scan of the rest can find nothing
    the block scan has not (the common result: text blocks, maybe `isError`)."""
    if not _PLAIN_MEMBERS.issuperset(result) or type(content) is not list:
        return False
    result_type = result.get(w.RESULT_TYPE, _COMPLETE)
    if result_type is not None and result_type != _COMPLETE:
        return False
    if type(result.get(w.IS_ERROR, False)) is not bool and result.get(w.IS_ERROR) is not None:
        return False
    for block in content:
        if type(block) is not dict or not _TEXT_BLOCK.issuperset(block):
            return False
        if block.get(w.BLOCK_TYPE) != w.BLOCK_TEXT or type(block.get(w.BLOCK_TEXT)) is not str:
            return False
    return True


_COMPLETE: Final = "complete"


def _dirty(text: str) -> bool:
    """Whether `clean_text` would change `text` (a hidden character or a lone surrogate)."""
    if text.isascii():
        return has_hidden(text)
    if has_hidden(text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _block_dirty(block: dict[str, Any]) -> bool:
    text = block.get(w.BLOCK_TEXT)
    if type(text) is str and _dirty(text):
        return True
    resource = block.get(w.BLOCK_RESOURCE)
    if type(resource) is dict:
        text = resource.get(w.BLOCK_TEXT)
        return type(text) is str and _dirty(text)
    return False


def _clean_structured(value: Any, flags: set[str], paths: list[tuple[PathItem, ...]]) -> Any:
    """A cleaned deep copy of structured content; records each changed string's path."""
    root: tuple[PathItem, ...] = (_STRUCTURED,)
    if type(value) is str:
        cleaned = clean_text(value, flags)
        if cleaned != value:
            paths.append(root)
        return cleaned
    copy = copy_json(value)
    stack: list[tuple[Any, tuple[PathItem, ...]]] = [(copy, root)]
    while stack:
        node, where = stack.pop()
        if type(node) is dict:
            if any(type(k) is str and _dirty(k) for k in node):
                renamed: dict[Any, Any] = {}
                for key, member in node.items():
                    new_key = clean_text(key, flags) if type(key) is str else key
                    while new_key != key and (new_key in renamed or new_key in node):
                        new_key = f"{new_key}\ufffd"
                    if new_key != key:
                        paths.append((*where, new_key))
                    renamed[new_key] = member
                node.clear()
                node.update(renamed)
            for key, member in node.items():
                if type(member) is str:
                    cleaned = clean_text(member, flags)
                    if cleaned != member:
                        node[key] = cleaned
                        paths.append((*where, key))
                elif type(member) is dict or type(member) is list:
                    stack.append((member, (*where, key)))
        else:
            for index, member in enumerate(node):
                if type(member) is str:
                    cleaned = clean_text(member, flags)
                    if cleaned != member:
                        node[index] = cleaned
                        paths.append((*where, index))
                elif type(member) is dict or type(member) is list:
                    stack.append((member, (*where, index)))
    return copy
